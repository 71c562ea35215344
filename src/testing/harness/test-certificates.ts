import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A throwaway CA, a server certificate for 127.0.0.1 and a client
 * certificate, made with the openssl command (Node cannot sign certificates),
 * for tests of TLS and mutual TLS. Valid for one day.
 */
export interface TestCertificates {
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

export function createTestCertificates(dir: string): TestCertificates {
  const path = (name: string) => join(dir, name);
  const openssl = (...args: string[]) =>
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ecKey,
    '-keyout',
    path('ca.key'),
    '-out',
    path('ca.pem'),
    '-subj',
    '/CN=berth-test-ca',
    '-days',
    '1',
  );
  const issue = (name: string, subject: string, extensions: string) => {
    writeFileSync(path(`${name}.ext`), extensions);
    openssl('req', ...ecKey, '-keyout', path(`${name}.key`), '-out', path(`${name}.csr`), '-subj', subject);
    openssl(
      'x509',
      '-req',
      '-in',
      path(`${name}.csr`),
      '-CA',
      path('ca.pem'),
      '-CAkey',
      path('ca.key'),
      '-CAcreateserial',
      '-out',
      path(`${name}.pem`),
      '-days',
      '1',
      '-extfile',
      path(`${name}.ext`),
    );
  };
  issue('server', '/CN=127.0.0.1', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n');
  issue('client', '/CN=berth', 'extendedKeyUsage=clientAuth\n');
  return {
    ca: path('ca.pem'),
    serverCert: path('server.pem'),
    serverKey: path('server.key'),
    clientCert: path('client.pem'),
    clientKey: path('client.key'),
  };
}
