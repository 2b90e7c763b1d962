#pragma once
/// A results file written through stdio with every write checked, so a full disk or a file
/// size limit is an error naming the file instead of a silently short file. write() never
/// throws (the time-series sampler and pcap capture run inside the simulation): the first
/// failure is kept and reported by check() and close().
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace fabricsim {

/// "cannot write <path>: <strerror>".
class write_error : public std::runtime_error
{
public:
    write_error(const std::string& path, int err);
};

class output_file
{
public:
    /// Creates or truncates `path`; throws write_error if it cannot.
    explicit output_file(std::string path);
    /// Closes without reporting: only reached unchecked while another error unwinds.
    ~output_file();
    output_file(const output_file&) = delete;
    output_file& operator=(const output_file&) = delete;

    void write(const void* data, std::size_t n) {
        if (m_errno == 0 && std::fwrite(data, 1, n, m_file) != n) record_error();
        m_bytes += n;
    }
    void write(std::string_view s) { write(s.data(), s.size()); }
    bool failed() const { return m_errno != 0; }
    /// Throws write_error if a write has failed.
    void check() const;
    /// Flushes and closes; throws write_error if that or an earlier write failed.
    void close();
    const std::string& path() const { return m_path; }
    /// Bytes handed to write() so far.
    std::uint64_t bytes() const { return m_bytes; }

private:
    void record_error();

    std::string m_path;
    std::FILE* m_file = nullptr;
    int m_errno = 0;
    std::uint64_t m_bytes = 0;
};

/// Writes `text` as the whole content of `path` (summary.json, config.yaml); throws write_error.
void write_file(const std::string& path, std::string_view text);

}  // namespace fabricsim
