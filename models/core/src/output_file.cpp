#include "fabricsim/core/output_file.h"

#include <cerrno>
#include <cstring>

namespace fabricsim {

write_error::write_error(const std::string& path, int err)
    : std::runtime_error("cannot write " + path + ": " + std::strerror(err)) {}

output_file::output_file(std::string path) : m_path(std::move(path)) {
    m_file = std::fopen(m_path.c_str(), "wb");
    if (!m_file) throw write_error(m_path, errno);
}

output_file::~output_file() {
    if (m_file) std::fclose(m_file);
}

void output_file::record_error() {
    m_errno = errno ? errno : EIO;
}

void output_file::check() const {
    if (m_errno) throw write_error(m_path, m_errno);
}

void output_file::close() {
    if (!m_file) return;
    if (m_errno == 0 && std::fflush(m_file) != 0) record_error();
    if (std::fclose(m_file) != 0 && m_errno == 0) record_error();
    m_file = nullptr;
    check();
}

void write_file(const std::string& path, std::string_view text) {
    output_file f(path);
    f.write(text);
    f.close();
}

}  // namespace fabricsim
