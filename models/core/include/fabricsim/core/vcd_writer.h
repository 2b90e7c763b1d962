#pragma once
/// A value change dump (IEEE 1364-2005 §18, four-state VCD) of sampled signals, for waveform
/// viewers (GTKWave) and VCD readers. Why our own writer and not sc_trace: the platform samples
/// on the model scheduler, ahead of the SystemC kernel (scheduler.h), while sc_trace dumps at
/// kernel time steps; and the values must be exactly the time series' text.
///
/// Timing model: a signal's value is what the caller samples at each call; the file has a
/// `#time` (ps) only where at least one value changed since the previous call, and only the
/// changed values under it (the first call dumps all under $dumpvars). Between samples a viewer
/// holds the last value.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fabricsim/core/output_file.h"
#include "fabricsim/core/units.h"

namespace fabricsim {

class vcd_writer
{
public:
    struct signal {
        std::string path;   ///< scopes and name, '.'-separated: "leaf0.p3_frame_bytes"
        bool real = false;  ///< a real variable; else an unsigned 64-bit vector
    };
    /// Creates `path` and writes the header: $timescale 1 ps, one $scope module per path part
    /// under `top`, one $var per signal, $enddefinitions. Throws write_error if it cannot.
    vcd_writer(const std::string& path, const std::string& top, std::vector<signal> signals);

    /// The values at `t` (>= the previous call's), in signal order: decimal unsigned integers,
    /// or reals as text a reader parses (csv::append_real's). Writes those that changed.
    void sample(ps_t t, const std::vector<std::string_view>& values);

    output_file& file() { return m_out; }

private:
    static std::string id_code(std::size_t i);  ///< printable identifier: '!'..'~', base 94

    output_file m_out;
    std::vector<signal> m_signals;
    std::vector<std::string> m_ids;
    std::vector<std::string> m_last;  ///< last dumped text per signal
    std::string m_buf;                ///< one dump, reused
    bool m_first = true;
};

}  // namespace fabricsim
