"""Links out of Headroom: the AWS console page of a volume or an instance, and a TiKV node's Grafana
dashboard (pure functions; in the inventory feature as they build URLs with urllib).

    aws_console_url(kind, resource_id, region) -> str | None
        The EC2 console's detail page (AWS: "Amazon EC2 console", https://docs.aws.amazon.com/ec2/; the console's
        own deep links: #VolumeDetails:volumeId=..., #InstanceDetails:instanceId=...); None without a region.
    grafana_node_url(grafana_url, instance, dashboard_uid=TIKV_DETAILS_UID) -> str
        TiKV's "TiKV-Details" dashboard for one instance (the dashboard's `instance` variable) over the last 6 hours.
"""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import quote, urlencode

# TiKV's TiKV-Details dashboard uid, as TiKV's own dashboard source sets it (tikv/tikv
# metrics/grafana/tikv_details.dashboard.py: Dashboard(title="Test-Cluster-TiKV-Details", uid="RDVQiEzZz")); TiUP and
# TiDB Operator deploy that dashboard (with the cluster's name in its title).
TIKV_DETAILS_UID = "RDVQiEzZz"
_REGION = re.compile(r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$")


def aws_console_url(kind: Literal["volume", "instance"], resource_id: str, region: str | None) -> str | None:
    if not region or not _REGION.match(region):
        return None
    fragment = (f"VolumeDetails:volumeId={quote(resource_id)}" if kind == "volume"
                else f"InstanceDetails:instanceId={quote(resource_id)}")
    host = "console.amazonaws-us-gov.com" if "-gov-" in region else f"{region}.console.aws.amazon.com"
    return f"https://{host}/ec2/home?region={region}#{fragment}"


def grafana_node_url(grafana_url: str, instance: str, dashboard_uid: str = TIKV_DETAILS_UID) -> str:
    query = urlencode({"var-instance": instance, "from": "now-6h", "to": "now"})
    return f"{grafana_url.rstrip('/')}/d/{quote(dashboard_uid)}?{query}"
