#pragma once
// Every string of a pod's spec a container can see, not only the values a person fills in: env
// names, dnsConfig (/etc/resolv.conf), hostAliases (/etc/hosts), mount paths
// (/proc/self/mountinfo), the names of the files a Secret or ConfigMap volume holds (attack 54,
// T1); and the pieces a pod puts back together, joined.
#include <string>
#include <vector>

#include "rossoctl/verify/pod_checks.hpp"

namespace rossoctl::verify {

// Every string of the pod's spec (a walk, so a field added later is read too) but those
// readableValues reads already (env values, command, args, probe and hook commands, paths and
// headers), each named where a container sees it ("container agent env name", "pod
// dnsConfig.options atk"); and the key names of each source, by their place in it.
std::vector<ReadableValue> specStrings(const nlohmann::json& pod,
                                       const std::vector<CredentialSource>& sources);

// text's pieces between separators, the empty ones left out ("a--b" is a, b).
std::vector<std::string> nonEmptyPieces(const std::string& text, char separator);

// What a pod may make of pieces (two or more): joined without separators, with '.', their
// longest base64url runs, and without the pieces shorter than 8 characters; none for one piece
// or one longer than 64 KiB.
std::vector<std::string> joinedPieces(const std::vector<std::string>& pieces);

// The numbers of the pod's spec the agent reads back (supplementalGroups, hostAliases and
// dnsConfig addresses, volume file modes), each as (where, bytes): kMostNumberBytes bounds them
// together with the pod's namespace's Service numbers.
std::vector<std::pair<std::string, size_t>> specNumberChannels(const nlohmann::json& pod);

// "atk-t2" before "atk-t10": digits compared as numbers, the rest as text (external_names.cpp).
bool numberedBefore(const std::string& a, const std::string& b);

// Pieces joined: `joins` are what a pod may put back together, `pieces` where each piece is
// read (a piece already judged needs no join).
struct JoinedValues {
    std::string where;
    std::vector<std::string> pieces;
    std::vector<std::string> joins;
};

// The pieces of one place, joined as a pod may: the segments of one mount path, the labels of
// one hostname and of all hostAliases and dnsConfig searches, adjacent env names, the dnsConfig
// options' values, the key names of one Secret or ConfigMap and the items' paths of one volume,
// in order; each without separators, with '.', and with the short pieces (tags such as "h0"
// or "1.") left out.
std::vector<JoinedValues> joinedPlaces(const nlohmann::json& pod,
                                       const std::vector<CredentialSource>& sources);

}  // namespace rossoctl::verify
