"""The public documents findings cite, and the pages that explain Headroom's own thresholds.

What a user reads in a finding (its sources, a limit's source, a forecast's method, notes) names a document they
can open: AWS documentation, PingCAP/TiKV documentation or source, with its link. Internal notebooks and module
names never reach them (a test scans every example scenario's findings for such leaks). A threshold that is
Headroom's own choice cites its "How Headroom decides" page by that page's title (the pages are the repository's
docs/thresholds/*.md, which the app renders; a user never reads a repository path).
"""

from __future__ import annotations

from dataclasses import dataclass

THRESHOLDS_DOCS = "docs/thresholds"
DECIDES = "How Headroom decides"

# Each page of docs/thresholds/ by its first heading (a test keeps the two equal): the app links a source that names
# "How Headroom decides: <title>" to the page of that title.
THRESHOLD_PAGES: dict[str, str] = {
    "alertmanager.md": "Alertmanager: how long a posted alert lasts",
    "apply-guards.md": "Apply guards: when a change stops a run",
    "block-cache.md": "Block cache: when to shrink it, when to grow it",
    "block-size.md": "Block size",
    "burst.md": "Burst buckets: when a forecast is a finding",
    "cluster-config.md": "One TiKV config value per group of like stores",
    "compaction.md": "Compaction",
    "cost.md": "Cost: gp2 -> gp3 and over-provisioned volumes",
    "disk.md": "Disk space: PD's lines, TiKV's reserve, and a filesystem that was not grown",
    "fix-outcomes.md": "Fix outcomes: when a prediction held",
    "finding-groups.md": "Findings that share a cause (Headroom's own choices)",
    "instance-ebs.md": "Instance EBS limits",
    "projected-ceiling.md": "Projected ceilings: warn at 30 days, critical at 7, size the fix for 90",
    "raft.md": "Raft log on its own volume",
    "sustained.md": "When a condition counts as sustained",
    "thread-pools.md": "Thread pools: when a pool is saturated, and what size to propose",
    "titan.md": "Titan and zstd",
    "volume-ceilings.md": "Volume ceilings and the size of a fix",
}


@dataclass(frozen=True)
class Reference:
    """A public document: a short title a reader recognises and its address."""

    title: str
    url: str

    def cite(self, section: str | None = None) -> str:
        """Return `title[, section] (url)`: the form every user-visible source takes."""
        where = f"{self.title}, {section}" if section else self.title
        return f"{where} ({self.url})"

    def __str__(self) -> str:
        return self.cite()


def decides_page(page: str) -> str:
    """Name a "How Headroom decides" page (docs/thresholds/<page>) the way a user reads it and the app links it."""
    return f"{DECIDES}: {THRESHOLD_PAGES[page]}"


def headroom_threshold(page: str, what: str | None = None) -> str:
    """Cite the "How Headroom decides" page that explains one of Headroom's own choices."""
    label = f"Headroom's threshold: {what}" if what else "Headroom's threshold"
    return f"{label} ({decides_page(page)})"


# --- AWS documentation
EBS_VOLUME_TYPES = Reference(
    "AWS: Amazon EBS volume types", "https://docs.aws.amazon.com/ebs/latest/userguide/ebs-volume-types.html"
)
EBS_GP = Reference(
    "AWS: General Purpose SSD volumes (gp2 I/O credits and burst)",
    "https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html",
)
EBS_PIOPS = Reference(
    "AWS: Provisioned IOPS SSD volumes", "https://docs.aws.amazon.com/ebs/latest/userguide/provisioned-iops.html"
)
EBS_HDD = Reference(
    "AWS: Throughput Optimized HDD and Cold HDD volumes", "https://docs.aws.amazon.com/ebs/latest/userguide/hdd-vols.html"
)
EBS_IO_CHARACTERISTICS = Reference(
    "AWS: Amazon EBS I/O characteristics and monitoring",
    "https://docs.aws.amazon.com/ebs/latest/userguide/ebs-io-characteristics.html",
)
EBS_CLOUDWATCH = Reference(
    "AWS: Amazon CloudWatch metrics for Amazon EBS",
    "https://docs.aws.amazon.com/ebs/latest/userguide/using_cloudwatch_ebs.html",
)
EBS_MODIFY = Reference(
    "AWS: Modify a volume using Amazon EBS Elastic Volumes",
    "https://docs.aws.amazon.com/ebs/latest/userguide/ebs-modify-volume.html",
)
EBS_EXTEND_FS = Reference(
    "AWS: Extend the file system after resizing an EBS volume",
    "https://docs.aws.amazon.com/ebs/latest/userguide/recognize-expanded-volume-linux.html",
)
EBS_OPTIMIZED = Reference(
    "AWS: Amazon EBS-optimized instances", "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ebs-optimized.html"
)
EC2_CLOUDWATCH = Reference(
    "AWS: CloudWatch metrics for your EC2 instances (EBSIOBalance%, EBSByteBalance%)",
    "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/viewing_metrics_with_cloudwatch.html",
)
EC2_PROCESSOR_INFO = Reference(
    "AWS: EC2 API ProcessorInfo (supported architectures)",
    "https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_ProcessorInfo.html",
)
EBS_PRICING = Reference("AWS: Amazon EBS pricing", "https://aws.amazon.com/ebs/pricing/")
COMPUTE_OPTIMIZER_LOOKBACK = Reference(
    "AWS Compute Optimizer: Recommendation preferences (look-back period)",
    "https://docs.aws.amazon.com/compute-optimizer/latest/ug/enhanced-infrastructure-metrics.html",
)
EC2_PRICING = Reference("AWS: Amazon EC2 On-Demand pricing", "https://aws.amazon.com/ec2/pricing/on-demand/")
PRICE_LIST_API = Reference(
    "AWS: Price List Query API (GetProducts)",
    "https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_pricing_GetProducts.html",
)
GP2_TO_GP3 = Reference(
    "AWS Prescriptive Guidance: Migrate Amazon EBS volumes from gp2 to gp3",
    "https://docs.aws.amazon.com/prescriptive-guidance/latest/optimize-costs-microsoft-workloads/ebs-migrate-gp2-gp3.html",
)
COMPUTE_OPTIMIZER_EBS = Reference(
    "AWS Compute Optimizer: EBS metrics analyzed",
    "https://docs.aws.amazon.com/compute-optimizer/latest/ug/ebs-metrics-analyzed.html",
)

# --- PingCAP and TiKV
PINGCAP_AWS = Reference(
    "PingCAP: Best Practices for TiDB on AWS Cloud",
    "https://docs.pingcap.com/tidb/stable/best-practices-for-tidb-on-aws-cloud",
)
PINGCAP_PUBLIC_CLOUD = Reference(
    "PingCAP: TiDB Best Practices on Public Cloud",
    "https://docs.pingcap.com/tidb/stable/best-practices-on-public-cloud",
)
PINGCAP_EBS_BLOG = Reference(
    "PingCAP blog: Improve Performance and Data Availability with Elastic Block Store",
    "https://www.pingcap.com/blog/improve-performance-and-data-availability-with-elastic-block-store/",
)
TIKV_CONFIG = Reference(
    "PingCAP: TiKV Configuration File", "https://docs.pingcap.com/tidb/stable/tikv-configuration-file"
)
DYNAMIC_CONFIG = Reference(
    "PingCAP: Modify Configuration Dynamically", "https://docs.pingcap.com/tidb/stable/dynamic-config"
)
TUNE_THREADS = Reference(
    "PingCAP: Tune TiKV Thread Pool Performance",
    "https://docs.pingcap.com/tidb/stable/tune-tikv-thread-performance",
)
TUNE_MEMORY = Reference(
    "PingCAP: Tune TiKV Memory Parameter Performance",
    "https://docs.pingcap.com/tidb/stable/tune-tikv-memory-performance",
)
MASSIVE_REGIONS = Reference(
    "PingCAP: Best Practices for Tuning Massive Regions",
    "https://docs.pingcap.com/tidb/stable/massive-regions-best-practices",
)
PD_CONFIG = Reference(
    "PingCAP: PD Configuration File", "https://docs.pingcap.com/tidb/stable/pd-configuration-file"
)
TITAN = Reference("PingCAP: Titan Overview", "https://docs.pingcap.com/tidb/stable/titan-overview")
TIKV_CONFIG_TEMPLATE = Reference(
    "TiKV: etc/config-template.toml", "https://github.com/tikv/tikv/blob/master/etc/config-template.toml"
)
TIKV_DEPLOY_EKS = Reference(
    "PingCAP: Deploy a TiDB Cluster on AWS EKS", "https://docs.pingcap.com/tidb-in-kubernetes/stable/deploy-on-aws-eks"
)
TIKV_ALERT_RULES = Reference(
    "TiKV: metrics/alertmanager/tikv.rules.yml", "https://github.com/tikv/tikv/blob/master/metrics/alertmanager/tikv.rules.yml"
)
