"""The change ledger: what changed on a cluster (patches marked applied, and what Headroom itself saw change in
the EC2 inventory and the live TiKV config), the findings each change addressed, and its measured effect."""
