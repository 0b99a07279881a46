/**
 * The files area: the lifecycle of uploads (files.ts: create, PUT content, complete with
 * verification and scanning, download, deletion request and purge) and the scanners
 * (scanning.ts: built-in EICAR and magic-bytes checks, ClamAV's clamd). Content is kept by the
 * blob store (services/blobs/), encrypted at rest.
 */
export * from './files';
export * from './scanning';
