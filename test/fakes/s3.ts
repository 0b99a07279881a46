/**
 * A loopback S3-compatible server for tests: path-style addressing (`/<bucket>/<key>`), the
 * four calls the blob store makes (PutObject, GetObject with Range, HeadObject, DeleteObject),
 * AWS Signature Version 4 verified on every request (a wrong secret is 403
 * SignatureDoesNotMatch), S3's XML error bodies. Objects live in memory; every request is
 * recorded so tests can see what was sent.
 */
import { createHash, createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeS3Request {
  method: string;
  bucket: string;
  key: string;
  range: string | null;
  status: number;
  bytes: number;
}

export interface FakeS3 {
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  objects: Map<string, Buffer>;
  requests: FakeS3Request[];
  close(): Promise<void>;
}

const xmlError = (code: string, message: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;

export async function startFakeS3(opts: { bucket?: string; accessKeyId?: string; secretAccessKey?: string } = {}): Promise<FakeS3> {
  const bucket = opts.bucket ?? 'svc-test-bucket';
  const accessKeyId = opts.accessKeyId ?? 'AKIDFAKES3TEST';
  const secretAccessKey = opts.secretAccessKey ?? 'fake-s3-secret-key-0123456789';
  const objects = new Map<string, Buffer>();
  const requests: FakeS3Request[] = [];

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const url = new URL(req.url ?? '/', 'http://fake');
      const [, reqBucket = '', ...rest] = url.pathname.split('/');
      const key = rest.map(decodeURIComponent).join('/');
      const record: FakeS3Request = {
        method: req.method ?? 'GET',
        bucket: reqBucket,
        key,
        range: (req.headers.range as string) ?? null,
        status: 0,
        bytes: body.length,
      };
      requests.push(record);
      const send = (status: number, headers: Record<string, string | number>, payload?: Buffer | string) => {
        record.status = status;
        res.writeHead(status, headers);
        res.end(req.method === 'HEAD' ? undefined : payload);
      };
      const fail = (status: number, code: string, message: string) =>
        send(status, { 'content-type': 'application/xml' }, xmlError(code, message));

      const auth = verifySignature(req, url, body, accessKeyId, secretAccessKey);
      if (auth) return fail(403, auth.code, auth.message);
      if (reqBucket !== bucket) return fail(404, 'NoSuchBucket', 'The specified bucket does not exist');
      if (!key) return fail(400, 'InvalidRequest', 'Bucket operations are not supported by this fake');

      switch (req.method) {
        case 'PUT': {
          const declared = req.headers['content-length'];
          if (declared === undefined) return fail(411, 'MissingContentLength', 'You must provide the Content-Length HTTP header.');
          if (req.headers['content-encoding']?.includes('aws-chunked'))
            return fail(501, 'NotImplemented', 'aws-chunked uploads are not supported');
          objects.set(key, body);
          return send(200, { etag: `"${createHash('md5').update(body).digest('hex')}"` });
        }
        case 'GET':
        case 'HEAD': {
          const object = objects.get(key);
          if (!object) return fail(404, 'NoSuchKey', 'The specified key does not exist.');
          const range = req.headers.range;
          if (!range)
            return send(
              200,
              { 'content-length': object.length, 'content-type': 'application/octet-stream', 'accept-ranges': 'bytes' },
              object,
            );
          const m = /^bytes=(\d+)-(\d*)$/.exec(range);
          if (!m) return send(200, { 'content-length': object.length }, object);
          const start = Number(m[1]);
          const end = Math.min(m[2] === '' ? object.length - 1 : Number(m[2]), object.length - 1);
          if (start >= object.length || end < start) return fail(416, 'InvalidRange', 'The requested range is not satisfiable');
          const part = object.subarray(start, end + 1);
          return send(
            206,
            {
              'content-length': part.length,
              'content-range': `bytes ${start}-${end}/${object.length}`,
              'content-type': 'application/octet-stream',
            },
            part,
          );
        }
        case 'DELETE':
          objects.delete(key);
          return send(204, {});
        default:
          return fail(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    accessKeyId,
    secretAccessKey,
    objects,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();
const sha256Hex = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
/** RFC 3986 encoding as SigV4 wants it (each path segment once: S3 does not double-encode). */
const uriEncode = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** Null when the request carries a valid AWS SigV4 Authorization header; else the S3 error. */
function verifySignature(
  req: http.IncomingMessage,
  url: URL,
  body: Buffer,
  accessKeyId: string,
  secret: string,
): { code: string; message: string } | null {
  const header = req.headers.authorization ?? '';
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      header,
    );
  if (!m) return { code: 'AccessDenied', message: 'Missing or malformed SigV4 Authorization header' };
  const [, akid, date, region, signedHeaders, signature] = m;
  if (akid !== accessKeyId)
    return { code: 'InvalidAccessKeyId', message: 'The AWS Access Key Id you provided does not exist in our records.' };
  const payloadHash = String(req.headers['x-amz-content-sha256'] ?? '');
  if (payloadHash !== 'UNSIGNED-PAYLOAD' && payloadHash !== sha256Hex(body))
    return { code: 'XAmzContentSHA256Mismatch', message: 'The provided x-amz-content-sha256 header does not match what was computed.' };
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const names = signedHeaders.split(';');
  const canonicalHeaders = names
    .map(
      (n) =>
        `${n}:${String(req.headers[n] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('');
  const query = [...url.searchParams.entries()]
    .map(([k, v]) => [uriEncode(k), uriEncode(v)])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const canonicalPath = url.pathname
    .split('/')
    .map((seg) => uriEncode(decodeURIComponent(seg)))
    .join('/');
  const canonicalRequest = [req.method, canonicalPath, query, canonicalHeaders, signedHeaders, payloadHash].join('\n');
  const scope = `${date}/${region}/s3/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), 's3'), 'aws4_request');
  if (hmac(signingKey, stringToSign).toString('hex') !== signature)
    return { code: 'SignatureDoesNotMatch', message: 'The request signature we calculated does not match the signature you provided.' };
  return null;
}
