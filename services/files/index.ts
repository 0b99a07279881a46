/**
 * The files area: the lifecycle of uploads (files.ts: create, PUT content, complete with
 * verification and scanning, download, deletion request and purge) and the scanners
 * (scanning.ts: built-in EICAR and magic-bytes checks, ClamAV's clamd). Content is kept by the
 * blob store (services/kernel/blobs/), encrypted at rest. names.ts: what a stored file name may hold.
 */
export {
  type BlobView,
  checkUploadLength,
  completeFile,
  createFile,
  type CreateFileInput,
  type Download,
  EMPTY_FILE_NAME,
  type FilesRuntime,
  fileView,
  type FileView,
  getFile,
  listFiles,
  MAX_FILE_BYTES,
  measureUpload,
  openDownload,
  prepareUpload,
  purgeFile,
  readyFileRef,
  readyFilesByIds,
  requestFileDeletion,
  type StagedBlob,
  stageUpload,
} from './files';
export { storableFileName } from './names';
export {
  builtinScanner,
  clamdScanner,
  type FileScanner,
  fileScannersOf,
  isEicar,
  magicContradiction,
  type ScanInput,
  type ScanResult,
} from './scanning';
