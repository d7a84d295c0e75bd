#include "rossoctl/kube/base64.hpp"

#include <array>

namespace rossoctl::kube {

namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<int, 256> makeDecodeTable() {
    std::array<int, 256> table{};
    for (auto& entry : table) entry = -1;
    for (size_t i = 0; i < kAlphabet.size(); ++i)
        table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int>(i);
    return table;
}

constexpr std::array<int, 256> kDecodeTable = makeDecodeTable();

bool isBase64Space(char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

}  // namespace

std::string base64Encode(std::string_view bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        unsigned triple = static_cast<unsigned char>(bytes[i]) << 16 |
                          static_cast<unsigned char>(bytes[i + 1]) << 8 |
                          static_cast<unsigned char>(bytes[i + 2]);
        out += kAlphabet[triple >> 18 & 63];
        out += kAlphabet[triple >> 12 & 63];
        out += kAlphabet[triple >> 6 & 63];
        out += kAlphabet[triple & 63];
    }
    size_t rest = bytes.size() - i;
    if (rest > 0) {
        unsigned triple = static_cast<unsigned char>(bytes[i]) << 16;
        if (rest == 2) triple |= static_cast<unsigned char>(bytes[i + 1]) << 8;
        out += kAlphabet[triple >> 18 & 63];
        out += kAlphabet[triple >> 12 & 63];
        out += rest == 2 ? kAlphabet[triple >> 6 & 63] : '=';
        out += '=';
    }
    return out;
}

std::optional<std::string> base64Decode(std::string_view text) {
    std::string out;
    out.reserve(text.size() / 4 * 3);
    unsigned accumulator = 0;
    int bits = 0;
    size_t padding = 0;
    size_t symbols = 0;
    for (char c : text) {
        if (isBase64Space(c)) continue;
        if (c == '=') {
            ++padding;
            continue;
        }
        int value = kDecodeTable[static_cast<unsigned char>(c)];
        if (value < 0 || padding > 0) return std::nullopt;  // junk, or data after padding
        ++symbols;
        accumulator = (accumulator << 6 | static_cast<unsigned>(value)) & 0xFFFFFF;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>(accumulator >> bits & 0xFF);
        }
    }
    if (symbols % 4 == 1 || padding > 2) return std::nullopt;
    if (padding > 0 && (symbols + padding) % 4 != 0) return std::nullopt;
    return out;
}

}  // namespace rossoctl::kube
