/**
 * The files area: the lifecycle of uploads (files.ts: create, PUT content, complete with
 * verification and scanning, download, deletion request and purge) and the scanners
 * (scanning.ts: built-in EICAR and magic-bytes checks, ClamAV's clamd). Content is kept by the
 * blob store (services/blobs/), encrypted at rest. names.ts: what a stored file name may hold.
 */
export * from './files';
export * from './names';
export * from './scanning';
