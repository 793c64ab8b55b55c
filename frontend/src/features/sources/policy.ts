/**
 * The IAM policies of Headroom's read-only role, as shipped in deploy/aws/headroom-readonly-role.cfn.yaml and
 * deploy/aws/headroom-readonly-role.tf (links to backend/headroom/sources/aws/deploy_templates/, which the API serves filled in
 * at GET /api/v1/sources/aws/setup; policy.test.ts checks both files still grant exactly these actions).
 */
export const REQUIRED_ACTIONS = {
  Ec2Inventory: ['ec2:DescribeInstances', 'ec2:DescribeVolumes', 'ec2:DescribeInstanceTypes'],
  CloudWatchRead: ['cloudwatch:GetMetricData', 'cloudwatch:ListMetrics'],
} as const;

export const CFN_TEMPLATE_PATH = 'deploy/aws/headroom-readonly-role.cfn.yaml';
export const TERRAFORM_PATH = 'deploy/aws/headroom-readonly-role.tf';
export const HEADROOM_ACCOUNT_PLACEHOLDER = '<HEADROOM_AWS_ACCOUNT_ID>';
/** The file names the API gives the filled-in templates (GET /api/v1/sources/aws/setup). */
export const CFN_TEMPLATE_FILE = 'headroom-readonly-role.cfn.yaml';
export const TERRAFORM_FILE = 'headroom-readonly-role.tf';

/** The role's trust policy: Headroom's account may assume it only with this organisation's external ID. */
export function trustPolicy(externalId: string, headroomAccountId = HEADROOM_ACCOUNT_PLACEHOLDER): string {
  return JSON.stringify(
    {
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Principal: { AWS: `arn:aws:iam::${headroomAccountId}:root` },
          Action: 'sts:AssumeRole',
          Condition: { StringEquals: { 'sts:ExternalId': externalId } },
        },
      ],
    },
    null,
    2,
  );
}

/** The least-privilege permissions policy: read-only EC2 inventory and CloudWatch metrics. */
export function permissionsPolicy(): string {
  return JSON.stringify(
    {
      Version: '2012-10-17',
      Statement: Object.entries(REQUIRED_ACTIONS).map(([sid, actions]) => ({
        Sid: sid,
        Effect: 'Allow',
        Action: [...actions],
        // None of these Describe*/CloudWatch read actions support resource-level permissions.
        Resource: '*',
      })),
    },
    null,
    2,
  );
}

export function cloudFormationCommand(
  externalId: string,
  headroomAccountId = HEADROOM_ACCOUNT_PLACEHOLDER,
  templateFile = CFN_TEMPLATE_PATH,
): string {
  return [
    'aws cloudformation deploy \\',
    `  --template-file ${templateFile} \\`,
    '  --stack-name headroom-readonly \\',
    '  --capabilities CAPABILITY_NAMED_IAM \\',
    `  --parameter-overrides HeadroomAccountId=${headroomAccountId} ExternalId=${externalId}`,
  ].join('\n');
}

export function terraformCommand(
  externalId: string,
  headroomAccountId = HEADROOM_ACCOUNT_PLACEHOLDER,
  templateFile = TERRAFORM_PATH,
): string {
  return [
    `# in the folder of ${templateFile}`,
    'terraform init',
    'terraform apply \\',
    `  -var headroom_account_id=${headroomAccountId} \\`,
    `  -var external_id=${externalId}`,
  ].join('\n');
}
