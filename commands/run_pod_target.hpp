#pragma once
// sandbox exec, logs, cp and delete take a sandbox (NAME, sandbox/NAME) or, in kubectl's
// TYPE/NAME form, a pod `sandbox run --keep` kept (pod/NAME, pods/NAME, po/NAME).
#include <string>

#include "conventions.hpp"

namespace rossoctl::commands {

const ObjectType& podType();

struct SandboxOrRunPod {
    std::string name;
    bool runPod = false;  // pod/NAME: a pod sandbox run made
};

// "pod/x" -> {x, true}; "orders", "sandbox/orders" -> {orders, false}; another TYPE/ is a
// UsageError naming the forms taken.
SandboxOrRunPod sandboxOrRunPod(const std::string& argument);

// Whether the text before a '/' names the pod type ("pod", "pods", "po", any case).
bool namesPodType(const std::string& prefix);

}  // namespace rossoctl::commands
