# Headroom apply (write) role (Terraform twin of headroom-apply-role.cfn.yaml): separate from the read-only role,
# only needed if you turn on "Apply" in Headroom. ec2:ModifyVolume only on volumes carrying your tag
# (aws:ResourceTag/<key> is a condition key of ModifyVolume's volume resource), and
# ec2:DescribeVolumesModifications (no resource-level permissions, hence resources = ["*"]). The trust policy
# requires your organisation's external ID. No ec2:CreateTags: Headroom can never tag a volume to grant itself access.

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

variable "volume_tag_key" {
  description = "Headroom may modify only volumes carrying this tag key (with volume_tag_value)."
  type        = string
}

variable "volume_tag_value" {
  description = "The tag's value on the volumes Headroom may modify."
  type        = string
}

variable "role_name" {
  description = "Name of the IAM role to create."
  type        = string
  default     = "HeadroomApply"
}

data "aws_partition" "current" {}

data "aws_caller_identity" "current" {}

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

data "aws_iam_policy_document" "apply" {
  statement {
    sid       = "ModifyTaggedVolumesOnly"
    effect    = "Allow"
    actions   = ["ec2:ModifyVolume"]
    resources = ["arn:${data.aws_partition.current.partition}:ec2:*:${data.aws_caller_identity.current.account_id}:volume/*"]

    condition {
      test     = "StringEquals"
      variable = "aws:ResourceTag/${var.volume_tag_key}"
      values   = [var.volume_tag_value]
    }
  }

  statement {
    sid       = "FollowModifications"
    effect    = "Allow"
    actions   = ["ec2:DescribeVolumesModifications"]
    resources = ["*"]
  }
}

resource "aws_iam_role" "headroom_apply" {
  name                 = var.role_name
  description          = "Headroom modifies the type, IOPS or throughput of EBS volumes carrying the apply tag."
  assume_role_policy   = data.aws_iam_policy_document.trust.json
  max_session_duration = 3600
}

resource "aws_iam_role_policy" "headroom_apply" {
  name   = "headroom-apply"
  role   = aws_iam_role.headroom_apply.id
  policy = data.aws_iam_policy_document.apply.json
}

output "role_arn" {
  description = "Paste this ARN into Headroom's Settings, Apply section."
  value       = aws_iam_role.headroom_apply.arn
}
