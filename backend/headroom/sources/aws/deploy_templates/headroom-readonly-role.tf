# Headroom read-only role (Terraform twin of headroom-readonly-role.cfn.yaml): EC2 inventory and CloudWatch
# EBS/EC2 metrics, nothing else. The trust policy requires your organisation's external ID.
# Describe* and the CloudWatch read actions have no resource-level permissions, hence resources = ["*"].

variable "headroom_account_id" {
  description = "The AWS account ID Headroom runs in (shown on the Connect AWS page)."
  type        = string

  validation {
    condition     = can(regex("^[0-9]{12}$", var.headroom_account_id))
    error_message = "headroom_account_id must be a 12-digit AWS account ID."
  }
}

variable "external_id" {
  description = "Your organisation's external ID from Headroom (starts with headroom-)."
  type        = string
}

variable "role_name" {
  description = "Name of the IAM role to create."
  type        = string
  default     = "HeadroomReadOnly"
}

data "aws_partition" "current" {}

data "aws_iam_policy_document" "trust" {
  statement {
    effect  = "Allow"
    actions = ["sts:AssumeRole"]

    principals {
      type        = "AWS"
      identifiers = ["arn:${data.aws_partition.current.partition}:iam::${var.headroom_account_id}:root"]
    }

    condition {
      test     = "StringEquals"
      variable = "sts:ExternalId"
      values   = [var.external_id]
    }
  }
}

data "aws_iam_policy_document" "readonly" {
  statement {
    sid    = "Ec2Inventory"
    effect = "Allow"
    actions = [
      "ec2:DescribeInstances",
      "ec2:DescribeVolumes",
      "ec2:DescribeInstanceTypes",
    ]
    resources = ["*"]
  }

  statement {
    sid    = "CloudWatchRead"
    effect = "Allow"
    actions = [
      "cloudwatch:GetMetricData",
      "cloudwatch:ListMetrics",
    ]
    resources = ["*"]
  }
}

resource "aws_iam_role" "headroom" {
  name                 = var.role_name
  description          = "Headroom reads EC2 instances, volumes, instance types and CloudWatch metrics."
  assume_role_policy   = data.aws_iam_policy_document.trust.json
  max_session_duration = 3600
}

resource "aws_iam_role_policy" "headroom" {
  name   = "headroom-readonly"
  role   = aws_iam_role.headroom.id
  policy = data.aws_iam_policy_document.readonly.json
}

output "role_arn" {
  description = "Paste this ARN into Headroom's Connect AWS form."
  value       = aws_iam_role.headroom.arn
}
