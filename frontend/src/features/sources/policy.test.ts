import { beforeAll, describe, expect, it } from 'vitest';
import { CFN_TEMPLATE_PATH, permissionsPolicy, REQUIRED_ACTIONS, TERRAFORM_PATH, trustPolicy } from './policy';

// The files live outside the Vite root (which denies importing them), so read them from disk; the app's
// tsconfig has no Node types, hence the untyped import.
interface Fs {
  readFileSync(path: string, encoding: 'utf8'): string;
}
let cfn = '';
let tf = '';
beforeAll(async () => {
  const fs = (await import(/* @vite-ignore */ `node:${'fs'}`)) as Fs;
  // Vitest runs in frontend/; the repository root is one up.
  const cwd = (globalThis as unknown as { process: { cwd(): string } }).process.cwd();
  cfn = fs.readFileSync(`${cwd}/../${CFN_TEMPLATE_PATH}`, 'utf8');
  tf = fs.readFileSync(`${cwd}/../${TERRAFORM_PATH}`, 'utf8');
});

const ALL_ACTIONS = Object.values(REQUIRED_ACTIONS).flat();

function actionsIn(text: string): string[] {
  return [...new Set(text.match(/\b(?:ec2|cloudwatch):[A-Za-z]+/g) ?? [])].sort();
}

describe('the role policy shown on the Connect AWS page', () => {
  it('reads the shipped files', () => {
    expect(cfn).toContain('AWS::IAM::Role');
    expect(tf).toContain('aws_iam_role');
  });

  it('grants exactly the actions of the CloudFormation template shipped in deploy/aws', () => {
    expect(actionsIn(cfn)).toEqual([...ALL_ACTIONS].sort());
  });

  it('grants exactly the actions of the Terraform file shipped in deploy/aws', () => {
    expect(actionsIn(tf)).toEqual([...ALL_ACTIONS].sort());
  });

  it('puts the external ID in the trust condition and nothing writable in the permissions', () => {
    const trust = JSON.parse(trustPolicy('headroom-abc123', '111122223333'));
    expect(trust.Statement[0].Condition.StringEquals['sts:ExternalId']).toBe('headroom-abc123');
    expect(trust.Statement[0].Principal.AWS).toBe('arn:aws:iam::111122223333:root');
    const perms = JSON.parse(permissionsPolicy());
    const actions = perms.Statement.flatMap((s: { Action: string[] }) => s.Action);
    expect(actions).toEqual(ALL_ACTIONS);
    expect(actions.every((a: string) => /^(ec2:Describe|cloudwatch:(Get|List))/.test(a))).toBe(true);
  });
});
