"""The moto server scripts/services.sh starts: moto's own, answering DescribeInstanceTypes in pages as EC2 does.

moto 5 ignores MaxResults and NextToken on DescribeInstanceTypes and sends all of its ~1,400 instance types
(about a megabyte of XML) to every call, so each AWS connection test, which asks for 5, cost seconds of moto's CPU
and of the caller's parsing. EC2 returns at most MaxResults (5 to 100) types and a NextToken for the rest
(https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeInstanceTypes.html); a call without
MaxResults is answered whole, as before.

Usage: python scripts/moto_server.py [moto_server's arguments]
"""

from __future__ import annotations

import sys
from typing import Any

from moto.core.responses import ActionResult
from moto.ec2.responses.instances import InstanceResponse
from moto.server import main

_describe_every_type = InstanceResponse.describe_instance_types


def _describe_instance_types_in_pages(self: Any) -> ActionResult:
    answer = _describe_every_type(self)
    max_results = self._get_int_param("MaxResults")
    if max_results is None:
        return answer
    types = answer.result["InstanceTypes"]  # type: ignore[index]
    start = int(self._get_param("NextToken") or 0)
    page: dict[str, Any] = {"InstanceTypes": types[start:start + max_results]}
    if start + max_results < len(types):
        page["NextToken"] = str(start + max_results)
    return ActionResult(page)


InstanceResponse.describe_instance_types = _describe_instance_types_in_pages  # type: ignore[method-assign]

if __name__ == "__main__":
    sys.exit(main())
