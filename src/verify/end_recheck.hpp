#pragma once
// What the end re-check's files share (end_recheck.cpp, end_replay.cpp).
#include <nlohmann/json.hpp>
#include <string>

#include "json_access.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/transport.hpp"

namespace rossoctl::verify::end_recheck {

// Why an object could not be read again ("" when it was); an interrupted verify's error goes
// on up (its report is partial already).
template <typename Read>
std::string readAgain(Read&& read) {
    try {
        read();
    } catch (const kube::TransportError& error) {
        if (error.kind() == kube::TransportError::Kind::Cancelled) throw;
        return error.what();
    } catch (const kube::ApiError& error) {
        return error.what();
    } catch (const Error& error) {
        return error.what();  // a watch event the server sent malformed or oversized
    }
    return "";
}

inline std::string resourceVersionOf(const nlohmann::json& object) {
    return json_access::stringAt(json_access::at(object, "metadata"), "resourceVersion");
}

}  // namespace rossoctl::verify::end_recheck
