import { ScrollRegion } from '@/components/ScrollRegion';
import type { AwsTestReport } from '../api';

/** Per IAM action: allowed or not, naming each missing permission. */
export function AwsTestResult({ report }: { report: AwsTestReport }) {
  return (
    <div className="test-result" aria-label="Test result" role="region">
      <p className={report.ok ? 'test-result__summary test-result__summary--ok' : 'test-result__summary test-result__summary--fail'}>
        {report.demo
          ? 'Demo source: every check passes without calling AWS (the simulator stands in for it).'
          : report.ok
          ? `Connection works${report.region ? ` (tested in ${report.region})` : ''}: every permission Headroom needs is granted.`
          : report.missing.length > 0
            ? `Missing permission${report.missing.length > 1 ? 's' : ''}: ${report.missing.join(', ')}`
            : `The connection failed${report.error ? `: ${report.error}` : '.'}`}
      </p>
      {report.error && report.missing.length > 0 && <p className="test-result__error">{report.error}</p>}
      {report.import_started && <p role="status">The 14-day CloudWatch history import has started.</p>}
      {!report.ok && (
        <p className="muted">Nothing is imported until a test passes: fix the cause, then test again.</p>
      )}
      {report.checks.length > 0 && (
        <ScrollRegion label="Permission checks table">
          <table className="table" aria-label="IAM permission checks">
            <thead>
              <tr>
                <th scope="col">IAM action</th>
                <th scope="col">Result</th>
                <th scope="col">Detail</th>
              </tr>
            </thead>
            <tbody>
              {report.checks.map((check) => (
                <tr key={check.action}>
                  <th scope="row">
                    <code>{check.action}</code>
                  </th>
                  <td>
                    <span className={`health__badge health__badge--${check.ok ? 'ok' : 'failing'}`}>
                      {check.ok ? 'Pass' : 'Fail'}
                    </span>
                  </td>
                  <td>
                    {check.ok
                      ? '—'
                      : [check.error_code, check.message].filter(Boolean).join(': ') || 'Not allowed'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}
    </div>
  );
}
