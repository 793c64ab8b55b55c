"""Storage physics (pure): I/O accounting, credit buckets (gp2, st1/sc1, instance EBS), node ceilings."""
