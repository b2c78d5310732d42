// The batch scans' table: one line a scan (each row is made in its kernel file).
#include "variants/embeddings/batch_scans.hpp"

namespace distancies {

namespace {
void link(BatchScanRow& r) { r.copy_row = r.copy ? model_copies().find(r.copy) : nullptr; }

Table<BatchScanRow>& scan_table() {
  static Table<BatchScanRow> table(
      "embeddings", "scan", "batch scan",
      {gemm_tiles_scan(), fused_tensor_core_scan(), filtered_mma_scan(), filtered_i8_scan()});
  static const bool linked = [] {
    for (const BatchScanRow& r : table.rows()) link(const_cast<BatchScanRow&>(r));
    return true;
  }();
  (void)linked;
  return table;
}
}  // namespace

const Table<BatchScanRow>& batch_scans() { return scan_table(); }
const BatchScanRow& batch_scan(std::string_view name) { return batch_scans().at(name); }
const BatchScanRow& add_batch_scan(BatchScanRow row) {
  BatchScanRow& added = const_cast<BatchScanRow&>(scan_table().add(std::move(row)));
  link(added);
  return added;
}

double read_element_bytes(const BatchPipeline& p) {
  if (p.scan_row && p.scan_row->element_bytes > 0) return p.scan_row->element_bytes;
  const Storage s = p.per_query_pipeline ? p.per_query_pipeline->storage : gemm_storage(p.input);
  return s == Storage::F32 ? 4.0 : s == Storage::I8 ? 1.0 : 2.0;
}

std::optional<Refusal> batch_scan_refusal(const BatchScanRow& scan, int dim, int K, int cc_major) {
  return scan.refusal ? scan.refusal(dim, K, cc_major) : std::nullopt;
}

}  // namespace distancies
