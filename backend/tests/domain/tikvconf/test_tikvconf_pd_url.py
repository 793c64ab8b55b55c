"""The PD URL an exported script starts from: TiKV's own `pd.endpoints` (TiKV configuration file, [pd] endpoints;
https when [security] ca-path is set), never the loopback default a script on another host cannot reach."""

from __future__ import annotations

from typing import Any

import pytest
from headroom.domain.tikvconf.change import pd_url_of


@pytest.mark.parametrize(
    ("views", "expected"),
    [
        ([{"pd.endpoints": ["10.0.3.2:2379", "10.0.3.3:2379"]}], "http://10.0.3.2:2379"),
        ([{"pd.endpoints": ["10.0.3.2:2379"], "security.ca-path": "/etc/tls/ca.pem"}], "https://10.0.3.2:2379"),
        ([{"pd.endpoints": ["http://pd-0.pd:2379"]}], "http://pd-0.pd:2379"),
        ([{"pd.endpoints": "10.0.3.2:2379"}], "http://10.0.3.2:2379"),
        ([{"pd.endpoints": ["127.0.0.1:2379"]}, {"pd.endpoints": ["10.0.3.4:2379"]}], "http://10.0.3.4:2379"),
        ([{"pd.endpoints": []}, {}], None),
        ([], None),
    ],
)
def test_pd_url_comes_from_the_nodes_config(views: list[dict[str, Any]], expected: str | None) -> None:
    assert pd_url_of(views) == expected
