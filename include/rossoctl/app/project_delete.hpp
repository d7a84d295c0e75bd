#pragma once
// Deleting a project (`project delete`): its optional egress objects, LimitRange and quota,
// then the namespace (or OpenShift Project), and a watch until the namespace is gone.
#include <chrono>
#include <functional>
#include <string>

#include "rossoctl/app/context.hpp"

namespace rossoctl::app {

struct ProjectDeleteRequest {
    std::string name;
    bool terminating = false;  // the namespace is already being deleted: only wait
    // The namespace was adopted (project_write.hpp): only rossoctl's objects in it and its
    // labels and annotations on it go; the namespace and everything else in it stay.
    bool adopted = false;
    // The UID of the namespace that was checked (a project of rossoctl's): the delete carries
    // it as a precondition, so a namespace made anew under the name meanwhile is not deleted.
    std::string namespaceUid;
    bool wait = true;
    std::chrono::milliseconds timeout{0};  // of the wait; 0 = none
    // Called as each object is deleted ("limitrange/sandbox-limits"), so it is printed then.
    std::function<void(const std::string& object)> onDeleted;
    // Called with true before the wait for the namespace to go and with false when the watch
    // ends, before a time-out or interrupt is thrown (for a progress line on a terminal).
    std::function<void(bool waiting)> onWaiting;
};

// Objects already gone are skipped (in an adopted namespace, so are objects not labelled
// managed-by=rossoctl). Throws an error naming what was deleted before a refused
// delete, and Error when the wait is interrupted or times out.
void deleteProject(Context& context, const ProjectDeleteRequest& request);

}  // namespace rossoctl::app
