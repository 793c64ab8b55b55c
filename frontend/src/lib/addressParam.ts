/**
 * The part of `pathname` that `pattern`'s first group captures, decoded, or null when the pattern does not match
 * (another page) or the part is not a valid percent-encoding (an address typed or pasted wrong opens no request).
 */
export function addressParam(pattern: RegExp, pathname: string): string | null {
  const match = pattern.exec(pathname);
  if (!match?.[1]) return null;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return null;
  }
}
