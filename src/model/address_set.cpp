// Sets of addresses and ports as sorted, disjoint ranges: enough to add, subtract and name
// what a NetworkPolicy opens.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>

#include "rossoctl/errors.hpp"
#include "rossoctl/model/egress.hpp"

namespace rossoctl::model {

namespace {

using U128 = unsigned __int128;
constexpr U128 kAllOnes = ~U128(0);

U128 familyMax(bool v6) {
    return v6 ? kAllOnes : U128(0xFFFFFFFFu);
}

// The block of `bits` prefix bits starting at value (host bits cleared).
AddressRange block(bool v6, U128 value, int prefix) {
    const int width = v6 ? 128 : 32;
    const int hostBits = width - prefix;
    const U128 hostMask = hostBits == 128 ? kAllOnes : (U128(1) << hostBits) - 1;
    return {v6, value & ~hostMask & familyMax(v6), (value | hostMask) & familyMax(v6)};
}

bool before(const AddressRange& a, const AddressRange& b) {
    return a.v6 != b.v6 ? !a.v6 : a.first < b.first;
}

}  // namespace

std::string addressText(bool v6, U128 value) {
    char text[INET6_ADDRSTRLEN] = {};
    if (!v6) {
        const auto v = static_cast<uint32_t>(value);
        return fmt::format("{}.{}.{}.{}", v >> 24, (v >> 16) & 255, (v >> 8) & 255, v & 255);
    }
    unsigned char bytes[16];
    for (int i = 15; i >= 0; --i, value >>= 8) bytes[i] = static_cast<unsigned char>(value & 255);
    inet_ntop(AF_INET6, bytes, text, sizeof text);
    return text;
}

AddressSet AddressSet::allV4() {
    AddressSet set;
    set.ranges_.push_back({false, 0, familyMax(false)});
    return set;
}

AddressSet AddressSet::allV6() {
    AddressSet set;
    set.ranges_.push_back({true, 0, kAllOnes});
    return set;
}

AddressSet AddressSet::everything() {
    AddressSet set = allV4();
    set.add(allV6());
    return set;
}

AddressSet AddressSet::parse(const std::string& cidr) {
    const auto slash = cidr.find('/');
    const std::string address = cidr.substr(0, slash);
    const bool v6 = address.find(':') != std::string::npos;
    int prefix = v6 ? 128 : 32;
    if (slash != std::string::npos) {
        const std::string bits = cidr.substr(slash + 1);
        if (bits.empty() || bits.size() > 3 ||
            !std::all_of(bits.begin(), bits.end(), [](char c) { return c >= '0' && c <= '9'; }))
            throw Error(fmt::format("{:?} is not a CIDR", cidr));
        prefix = std::stoi(bits);
        if (prefix > (v6 ? 128 : 32)) throw Error(fmt::format("{:?} is not a CIDR", cidr));
    }
    unsigned char bytes[16] = {};
    if (inet_pton(v6 ? AF_INET6 : AF_INET, address.c_str(), bytes) != 1)
        throw Error(fmt::format("{:?} is not a CIDR", cidr));
    U128 value = 0;
    for (int i = 0; i < (v6 ? 16 : 4); ++i) value = (value << 8) | bytes[i];
    AddressSet set;
    set.ranges_.push_back(block(v6, value, prefix));
    return set;
}

void AddressSet::normalise() {
    std::sort(ranges_.begin(), ranges_.end(), before);
    std::vector<AddressRange> merged;
    for (const auto& range : ranges_) {
        if (!merged.empty() && merged.back().v6 == range.v6 &&
            (merged.back().last == kAllOnes || range.first <= merged.back().last + 1)) {
            merged.back().last = std::max(merged.back().last, range.last);
        } else {
            merged.push_back(range);
        }
    }
    ranges_ = std::move(merged);
}

void AddressSet::add(const AddressSet& other) {
    ranges_.insert(ranges_.end(), other.ranges_.begin(), other.ranges_.end());
    normalise();
}

AddressSet AddressSet::minus(const AddressSet& other) const {
    AddressSet out;
    for (auto range : ranges_) {
        bool gone = false;
        for (const auto& cut : other.ranges_) {
            if (cut.v6 != range.v6 || cut.last < range.first || cut.first > range.last) continue;
            if (cut.first > range.first)
                out.ranges_.push_back({range.v6, range.first, cut.first - 1});
            if (cut.last >= range.last) {
                gone = true;
                break;
            }
            range.first = cut.last + 1;
        }
        if (!gone) out.ranges_.push_back(range);
    }
    out.normalise();
    return out;
}

AddressSet AddressSet::intersect(const AddressSet& other) const {
    return minus(minus(other));
}

std::string AddressSet::describe(size_t limit) const {
    std::vector<std::string> cidrs;
    size_t total = 0;
    for (const auto& range : ranges_) {
        const int width = range.v6 ? 128 : 32;
        U128 at = range.first;
        while (true) {
            // The largest aligned block starting at `at` that stays inside the range.
            int prefix = width;
            while (prefix > 0) {
                const AddressRange wider = block(range.v6, at, prefix - 1);
                if (wider.first != at || wider.last > range.last) break;
                --prefix;
            }
            ++total;
            if (cidrs.size() < limit)
                cidrs.push_back(fmt::format("{}/{}", addressText(range.v6, at), prefix));
            const U128 last = block(range.v6, at, prefix).last;
            if (last >= range.last) break;
            at = last + 1;
        }
    }
    std::string text;
    for (const auto& cidr : cidrs) text += (text.empty() ? "" : ", ") + cidr;
    if (total > cidrs.size()) text += fmt::format(" and {} more", total - cidrs.size());
    return text.empty() ? "no address" : text;
}

std::string AddressSet::firstAddress() const {
    return ranges_.empty() ? "" : addressText(ranges_.front().v6, ranges_.front().first);
}

std::string protocolName(Protocol protocol) {
    switch (protocol) {
        case Protocol::TCP:
            return "TCP";
        case Protocol::UDP:
            return "UDP";
        case Protocol::SCTP:
            return "SCTP";
    }
    return "TCP";
}

PortSet PortSet::all() {
    PortSet set;
    for (auto& ranges : set.ranges_) ranges.push_back({1, 65535});
    return set;
}

void PortSet::add(Protocol protocol, int first, int last) {
    first = std::max(first, 1);
    last = std::min(last, 65535);
    if (first > last) return;
    auto& ranges = ranges_[static_cast<size_t>(protocol)];
    ranges.push_back({first, last});
    std::sort(ranges.begin(), ranges.end());
    std::vector<std::pair<int, int>> merged;
    for (const auto& range : ranges) {
        if (!merged.empty() && range.first <= merged.back().second + 1)
            merged.back().second = std::max(merged.back().second, range.second);
        else
            merged.push_back(range);
    }
    ranges = std::move(merged);
}

void PortSet::add(const PortSet& other) {
    for (size_t p = 0; p < 3; ++p)
        for (const auto& [first, last] : other.ranges_[p])
            add(static_cast<Protocol>(p), first, last);
}

PortSet PortSet::minus(const PortSet& other) const {
    PortSet out;
    for (size_t p = 0; p < 3; ++p) {
        for (auto [first, last] : ranges_[p]) {
            for (const auto& [cutFirst, cutLast] : other.ranges_[p]) {
                if (cutLast < first || cutFirst > last) continue;
                if (cutFirst > first) out.add(static_cast<Protocol>(p), first, cutFirst - 1);
                first = cutLast + 1;
                if (first > last) break;
            }
            if (first <= last) out.add(static_cast<Protocol>(p), first, last);
        }
    }
    return out;
}

bool PortSet::empty() const {
    return std::all_of(ranges_.begin(), ranges_.end(), [](const auto& r) { return r.empty(); });
}

bool PortSet::contains(Protocol protocol, int port) const {
    for (const auto& [first, last] : ranges_[static_cast<size_t>(protocol)])
        if (port >= first && port <= last) return true;
    return false;
}

std::string PortSet::describe() const {
    std::string text;
    for (size_t p = 0; p < 3; ++p) {
        if (ranges_[p].empty()) continue;
        std::string ports;
        for (const auto& [first, last] : ranges_[p])
            ports += (ports.empty() ? "" : ",") +
                     (first == last ? std::to_string(first) : fmt::format("{}-{}", first, last));
        text += (text.empty() ? "" : "; ") + protocolName(static_cast<Protocol>(p)) + " " + ports;
    }
    return text.empty() ? "no port" : text;
}

std::pair<Protocol, int> PortSet::example(std::optional<std::pair<Protocol, int>> preferred) const {
    if (preferred && contains(preferred->first, preferred->second)) return *preferred;
    for (size_t p = 0; p < 3; ++p)
        if (!ranges_[p].empty()) return {static_cast<Protocol>(p), ranges_[p].front().first};
    return {Protocol::TCP, 0};
}

}  // namespace rossoctl::model
