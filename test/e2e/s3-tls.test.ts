// End-to-end: the S3 tier against an HTTPS endpoint (issue 35). A second radosgw gateway serves TLS
// with a certificate this file makes with openssl (a test CA signs a certificate for 127.0.0.1;
// test/helpers/radosgw.sh tls-gateway starts it over the cluster .ci/run started). The client verifies
// the certificate against --s3-ca-file or NODE_EXTRA_CA_CERTS and works; a certificate it cannot verify
// (no CA given, or another CA) is refused with one clear line and exit 2 before the run, even with
// NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment: verification is never turned off.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { readValidResults } from '../report/validate-results.js';
import { execFileAsync, freshBucket, NO_RADOSGW, RADOSGW_DIR, RADOSGW_SH, runWith, s3Args } from './s3-env.js';
import { inTempDir, smallWorkloadArgs } from './run-cli.js';

const hasOpenssl = await execFileAsync('openssl', ['version']).then(
  () => true,
  () => false,
);
const SKIP = NO_RADOSGW !== false ? NO_RADOSGW : hasOpenssl ? false : 'openssl is not installed (apt-get install openssl)';
if (SKIP !== false) process.stdout.write(`# s3 TLS e2e tests skipped: ${SKIP}\n`);

/** A CA (key and self-signed certificate) in `dir`, named `name`. */
async function makeCa(dir: string, name: string): Promise<{ cert: string; key: string }> {
  const cert = join(dir, `${name}.pem`);
  const key = join(dir, `${name}.key`);
  await execFileAsync('openssl', [
    ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
    ...['-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=kvcache-bench test ${name}`],
    ...['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'],
  ]);
  return { cert, key };
}

/** A server certificate for 127.0.0.1 signed by `ca`: its chain file (leaf then CA) and key. */
async function makeServerCert(dir: string, ca: { cert: string; key: string }): Promise<{ chain: string; key: string }> {
  const key = join(dir, 'server.key');
  const csr = join(dir, 'server.csr');
  const leaf = join(dir, 'server.pem');
  const ext = join(dir, 'server.ext');
  writeFileSync(ext, 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n');
  await execFileAsync('openssl', [
    ...['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
    ...['-keyout', key, '-out', csr, '-subj', '/CN=127.0.0.1'],
  ]);
  await execFileAsync('openssl', [
    ...['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial'],
    ...['-out', leaf, '-days', '2', '-extfile', ext],
  ]);
  const chain = join(dir, 'chain.pem');
  writeFileSync(chain, readFileSync(leaf, 'utf8') + readFileSync(ca.cert, 'utf8'));
  return { chain, key };
}

describe('--storage-backend s3 over HTTPS (radosgw with a certificate made here)', { skip: SKIP }, () => {
  const dir = SKIP === false ? mkdtempSync(join(tmpdir(), 'kvc-tls-')) : '';
  const port = 7500 + (process.pid % 50);
  const endpoint = `https://127.0.0.1:${port}`;
  let goodCa = '';
  let otherCa = '';
  let gatewayPid = 0;

  before(async () => {
    const ca = await makeCa(dir, 'ca');
    otherCa = (await makeCa(dir, 'other-ca')).cert;
    goodCa = ca.cert;
    const server = await makeServerCert(dir, ca);
    const { stdout } = await execFileAsync('bash', [RADOSGW_SH, 'tls-gateway', RADOSGW_DIR ?? '', String(port), server.chain, server.key]);
    gatewayPid = Number(stdout.trim());
  });

  after(() => {
    if (gatewayPid > 0) process.kill(gatewayPid, 'SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  /** A short storage-only run against the TLS gateway. */
  async function tlsRun(tmp: string, extra: readonly string[], env: NodeJS.ProcessEnv = {}) {
    const out = join(tmp, 'r.json');
    const args = ['--num-users', '2', '--duration', '3', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--seed', '3', '--output', out];
    const r = await runWith(
      [...(await smallWorkloadArgs(tmp)), ...args, ...s3Args(freshBucket('tls'), endpoint), '--create-bucket', ...extra],
      env,
    );
    return { r, out };
  }

  const REFUSED = new RegExp(
    `^kv-cache: error: --storage-backend s3: the TLS certificate of 127\\.0\\.0\\.1:${port} cannot be verified \\((UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|SELF_SIGNED_CERT_IN_CHAIN): [^)]+\\): give the CA that signed it with --s3-ca-file FILE\\.pem or NODE_EXTRA_CA_CERTS \\(verification is never turned off\\)$`,
    'm',
  );

  test('a certificate signed by the CA of --s3-ca-file: the run goes through over https', async () => {
    await inTempDir(async (tmp) => {
      const { r, out } = await tlsRun(tmp, ['--s3-ca-file', goodCa]);
      assert.equal(r.code, 0, r.stderr);
      const doc = await readValidResults(out);
      assert.equal(doc.kvcache_bench.storage_io_mode, 'S3 over https');
      const o = doc.kvcache_bench.object_store;
      assert.ok(o !== undefined);
      assert.equal(o.endpoint_host, `127.0.0.1:${port}`);
      assert.ok(o.puts > 0 && o.gets > 0, `puts ${o.puts}, gets ${o.gets}`);
      assert.deepEqual(o.failures, {});
    });
  });

  test('the same CA through NODE_EXTRA_CA_CERTS: the run goes through, and so does a replay with --s3-ca-file', async () => {
    await inTempDir(async (tmp) => {
      const { r } = await tlsRun(tmp, [], { NODE_EXTRA_CA_CERTS: goodCa });
      assert.equal(r.code, 0, r.stderr);
      const trace = join(tmp, 't.csv');
      writeFileSync(
        trace,
        'Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n1,Write,65536,Tier-2,a,Prefill\n2,Read,65536,Tier-2,a,Decode\n',
      );
      const out = join(tmp, 'replay.json');
      const replay = await runWith([
        'replay',
        trace,
        '-o',
        out,
        ...s3Args(freshBucket('tls'), endpoint).slice(0, -2),
        '--create-bucket',
        '--s3-ca-file',
        goodCa,
      ]);
      assert.equal(replay.code, 0, replay.stderr);
      assert.ok(existsSync(out));
    });
  });

  test('no CA for it: refused with one clear line, exit 2, nothing written, even with NODE_TLS_REJECT_UNAUTHORIZED=0', async () => {
    await inTempDir(async (tmp) => {
      for (const env of [{}, { NODE_TLS_REJECT_UNAUTHORIZED: '0' }]) {
        const { r, out } = await tlsRun(tmp, [], env);
        assert.equal(r.code, 2, r.stderr);
        assert.match(r.stderr, REFUSED);
        assert.equal(r.stderr.split('\n').filter((l) => l.startsWith('kv-cache: error:')).length, 1);
        assert.ok(!r.stderr.includes('    at '), 'no stack trace');
        assert.equal(existsSync(out), false);
      }
    });
  });

  test('another CA in --s3-ca-file: refused the same way; a CA file that is not PEM, or an http:// endpoint with it, is exit 2 at start', async () => {
    await inTempDir(async (tmp) => {
      const other = await tlsRun(tmp, ['--s3-ca-file', otherCa]);
      assert.equal(other.r.code, 2, other.r.stderr);
      assert.match(other.r.stderr, REFUSED);
      const junk = join(tmp, 'junk.pem');
      writeFileSync(junk, 'not a certificate\n');
      const notPem = await tlsRun(tmp, ['--s3-ca-file', junk]);
      assert.equal(notPem.r.code, 2, notPem.r.stderr);
      assert.equal(notPem.r.stderr, `kv-cache: error: --s3-ca-file '${junk}' holds no PEM certificate (-----BEGIN CERTIFICATE----- …)\n`);
      const plain = await runWith([...(await smallWorkloadArgs(tmp)), ...s3Args('kvc-any', 'http://127.0.0.1:1'), '--s3-ca-file', goodCa]);
      assert.equal(plain.code, 2, plain.stderr);
      assert.match(plain.stderr, /--s3-ca-file verifies an https:\/\/ --s3-endpoint; this one is not https:\/\//);
    });
  });
});
