/**
 * The kubelet device manager accepts a device plugin only if its name is an
 * extended resource name (v1helper.IsExtendedResourceName): domain-prefixed,
 * outside kubernetes.io, and still a valid qualified name with "requests."
 * in front (the form quota uses).
 */
const DNS1123_SUBDOMAIN_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME_RE = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const REQUESTS_PREFIX = 'requests.';

export function isExtendedResourceName(name: string): boolean {
  const native = !name.includes('/') || name.includes('kubernetes.io/');
  if (native || name.startsWith(REQUESTS_PREFIX)) return false;
  return isQualifiedName(`${REQUESTS_PREFIX}${name}`);
}

function isQualifiedName(value: string): boolean {
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    if (prefix === '' || prefix.length > 253 || !DNS1123_SUBDOMAIN_RE.test(prefix)) return false;
    name = parts[1] ?? '';
  } else {
    return false;
  }
  return name !== '' && name.length <= 63 && QUALIFIED_NAME_RE.test(name);
}
