/**
 * src/format: the `.meguri` partition codec.
 *
 * Owns the byte layout of a partition file (header, section table, checksums, URL column
 * blocks, host records, opaque state blobs) and its validation. It never interprets what a
 * column or blob means — the frontier assigns column ids and checks their semantics, the
 * prioritizer and freshness policy own their blobs — so the container can gain sections and
 * columns without the codec learning about them. Browser-safe; the atomic file write lives
 * in `./file.ts`, exported from the Node entry only.
 */
export {
  type ColumnBlock,
  type ColumnData,
  type ColumnType,
  FORMAT_MAJOR,
  FORMAT_MINOR,
  CHURN_COLUMN_ID,
  type FieldKind,
  MAX_TIME_MS,
  fieldProblem,
  type HostBlockImage,
  type HostCapImage,
  type HostImage,
  MAX_BLOCK_RUN_ROWS,
  MAX_CAP_CRAWLS,
  MAX_FORBID_RUN,
  type IpImage,
  PARTITION_MAGIC,
  type PartitionImage,
  type PartitionMeta,
  SectionId,
  decodePartition,
  encodePartition,
  partitionSections,
  shiftHostClocks,
} from './partition.js';
