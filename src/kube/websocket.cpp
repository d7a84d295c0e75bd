#include "rossoctl/kube/websocket.hpp"

#include "rossoctl/errors.hpp"
#include "rossoctl/kube/base64.hpp"
#include "rossoctl/kube/digest.hpp"

namespace rossoctl::kube {

std::string encodeWsFrame(WsOpcode opcode, std::string_view payload, uint32_t maskKey, bool fin) {
    std::string frame;
    frame.reserve(payload.size() + 14);
    frame.push_back(static_cast<char>((fin ? 0x80 : 0x00) | static_cast<uint8_t>(opcode)));
    const uint64_t size = payload.size();
    if (size < 126) {
        frame.push_back(static_cast<char>(0x80 | size));
    } else if (size <= 0xFFFF) {
        frame.push_back(static_cast<char>(0x80 | 126));
        frame.push_back(static_cast<char>(size >> 8));
        frame.push_back(static_cast<char>(size & 0xFF));
    } else {
        frame.push_back(static_cast<char>(0x80 | 127));
        for (int shift = 56; shift >= 0; shift -= 8)
            frame.push_back(static_cast<char>((size >> shift) & 0xFF));
    }
    const uint8_t mask[4] = {static_cast<uint8_t>(maskKey >> 24),
                             static_cast<uint8_t>(maskKey >> 16),
                             static_cast<uint8_t>(maskKey >> 8), static_cast<uint8_t>(maskKey)};
    frame.append(reinterpret_cast<const char*>(mask), 4);
    for (size_t i = 0; i < payload.size(); ++i)
        frame.push_back(static_cast<char>(static_cast<uint8_t>(payload[i]) ^ mask[i % 4]));
    return frame;
}

void WsFrameParser::feed(std::string_view bytes) {
    // Consumed frames leave once per feed, not once per frame (many tiny frames in one read
    // would otherwise move the buffer for each).
    buffer_.erase(0, offset_);
    offset_ = 0;
    buffer_.append(bytes);
}

std::optional<WsFrame> WsFrameParser::next() {
    const std::string_view buffer = std::string_view(buffer_).substr(offset_);
    if (buffer.size() < 2) return std::nullopt;
    const auto* bytes = reinterpret_cast<const uint8_t*>(buffer.data());
    if (bytes[0] & 0x70) throw Error("websocket: reserved bits set in a frame from the server");
    WsFrame frame;
    frame.fin = (bytes[0] & 0x80) != 0;
    frame.opcode = static_cast<WsOpcode>(bytes[0] & 0x0F);
    const uint8_t op = bytes[0] & 0x0F;
    if ((op > 0x2 && op < 0x8) || op > 0xA)
        throw Error("websocket: unknown opcode " + std::to_string(op));
    const bool masked = (bytes[1] & 0x80) != 0;
    uint64_t size = bytes[1] & 0x7F;
    size_t header = 2;
    if (size == 126) {
        if (buffer.size() < 4) return std::nullopt;
        size = (uint64_t{bytes[2]} << 8) | bytes[3];
        header = 4;
    } else if (size == 127) {
        if (buffer.size() < 10) return std::nullopt;
        size = 0;
        for (int i = 0; i < 8; ++i) size = (size << 8) | bytes[2 + i];
        header = 10;
    }
    if (op >= 0x8 && (size > 125 || !frame.fin))
        throw Error("websocket: malformed control frame from the server");
    if (size > maxFrame_)
        throw Error("websocket: frame of " + std::to_string(size) + " bytes exceeds the limit");
    if (masked) header += 4;  // servers must not mask, but tolerate it
    if (buffer.size() < header + size) return std::nullopt;
    frame.payload = std::string(buffer.substr(header, static_cast<size_t>(size)));
    if (masked) {
        const uint8_t* mask = bytes + header - 4;
        for (size_t i = 0; i < frame.payload.size(); ++i)
            frame.payload[i] =
                static_cast<char>(static_cast<uint8_t>(frame.payload[i]) ^ mask[i % 4]);
    }
    offset_ += header + static_cast<size_t>(size);
    return frame;
}

std::string wsAcceptFor(const std::string& key) {
    const std::string input = key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    return base64Encode(sha1(input));
}

}  // namespace rossoctl::kube
