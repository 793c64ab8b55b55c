"""Per-node values where hosts differ: TiUP takes one server_configs value plus per-instance
overrides; TiDB Operator takes one value every pod can hold.

TiUP topology reference: `server_configs.tikv` applies to every TiKV and "if an instance has a configuration item
with the same name, the instance's configuration item takes effect". TiDB Operator: `spec.tikv.config` is one TOML
string for every TiKV pod.
"""

from __future__ import annotations

import tomllib

import yaml
from headroom.domain.tikvconf.parse import flatten
from headroom.domain.tikvconf.render import artefact
from test_tikvconf_render import NODES, change, patch_of

KEY = "storage.scheduler-worker-pool-size"
# Two m6i.2xlarge at 6 threads (within 8 − 1 = 7) and one r6i.4xlarge at 10 (within 16 − 1 = 15).
TWO_GROUPS = patch_of(
    change(KEY, 6, 4, node=NODES[0].status_address),
    change(KEY, 6, 4, node=NODES[1].status_address),
    change(KEY, 10, 8, node=NODES[2].status_address),
)


def test_tiup_puts_the_common_value_in_server_configs_and_overrides_the_rest() -> None:
    document = yaml.safe_load(artefact(TWO_GROUPS, "tiup").body)
    assert document["server_configs"] == {"tikv": {KEY: 6}}
    assert document["tikv_servers"] == [{"host": "10.0.1.7", "port": 20160, "config": {KEY: 10}}]


def test_operator_gives_every_pod_the_value_all_can_take() -> None:
    rendered = artefact(TWO_GROUPS, "operator")
    config = yaml.safe_load(rendered.body)["spec"]["tikv"]["config"]
    # 10 does not fit the 8-vCPU hosts (at most 7 threads); 6 fits every host: each was sized within its own.
    assert flatten(tomllib.loads(config)) == {KEY: 6}
    assert any("no per-pod form" in note and "gets 6" in note for note in rendered.notes)
