#pragma once
// RFC 6455 framing for the client side: masked frames out, an incremental parser for
// frames in (fragmentation, control frames interleaved, size limits).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rossoctl::kube {

enum class WsOpcode : uint8_t {
    Continuation = 0x0,
    Text = 0x1,
    Binary = 0x2,
    Close = 0x8,
    Ping = 0x9,
    Pong = 0xA
};

struct WsFrame {
    bool fin = true;
    WsOpcode opcode = WsOpcode::Binary;
    std::string payload;
};

// A client frame: always masked with the given key (RFC 6455 5.3).
std::string encodeWsFrame(WsOpcode opcode, std::string_view payload, uint32_t maskKey,
                          bool fin = true);

// Feeds bytes in any split; next() yields whole frames. A protocol violation throws Error.
class WsFrameParser {
  public:
    // The apiserver and kubelet send exec output in frames of a few KiB; a server that sends
    // larger ones is refused rather than buffered.
    static constexpr size_t kDefaultMaxFrame = 4 * 1024 * 1024;
    explicit WsFrameParser(size_t maxFrameBytes = kDefaultMaxFrame) : maxFrame_(maxFrameBytes) {}
    void feed(std::string_view bytes);
    std::optional<WsFrame> next();

  private:
    std::string buffer_;
    size_t offset_ = 0;  // of the next frame in buffer_: consumed bytes go at the next feed
    size_t maxFrame_;
};

// The Sec-WebSocket-Accept value a server must answer for a key.
std::string wsAcceptFor(const std::string& key);

}  // namespace rossoctl::kube
