#pragma once
/// The size of a run's results folder, estimated from the configuration alone, so that a
/// configuration that would fill the disk (`sample_interval: 1ps`, a pcap of a long run) is
/// refused before anything is written. Each part is an upper bound of the usual case: every
/// time-series value as wide as the buffer size, pcaps at line rate for their window (up to
/// their cap), one trace row per full segment the flow's link can carry.
#include <vector>

#include "fabricsim/core/vcd_writer.h"
#include "fabricsim/platforms/scenario.h"

namespace fabricsim::platforms {

struct output_estimate {
    double timeseries_rows = 0;
    double timeseries_row_bytes = 0;
    double pcap_bytes = 0;
    double trace_bytes = 0;
    double table_bytes = 0;  ///< flows.csv, queries.csv, summary.json
    double timeseries_bytes() const { return timeseries_rows * timeseries_row_bytes; }
    double total() const { return timeseries_bytes() + pcap_bytes + trace_bytes + table_bytes; }
};

output_estimate estimate_output(const scenario& sc);

/// Throws config_error naming results.max_output_bytes, with the estimate and its parts, when
/// the estimate exceeds sc.max_output_bytes.
void check_output_estimate(const scenario& sc);

/// trace.vcd's size at most with `traced` signals (results.vcd, known once the platform is
/// built): every value changes at every sample, a vector as 64 bits, a real as 24 characters.
double vcd_bytes(const scenario& sc, const std::vector<vcd_writer::signal>& traced);
/// check_output_estimate() with trace.vcd added (the platform calls it before writing).
void check_output_estimate(const scenario& sc, const std::vector<vcd_writer::signal>& traced);

}  // namespace fabricsim::platforms
