#include "rossoctl/app/partial_write.hpp"

#include <fmt/format.h>

#include <exception>

#include "rossoctl/errors.hpp"
#include "rossoctl/kube/api_error.hpp"

namespace rossoctl::app {

void rethrowPartialWrite(const std::string& verb, const kube::ResourceRef& ref,
                         const std::string& ns, const std::string& name,
                         const std::vector<std::string>& done, const std::string& finishHint) {
    std::string written = "nothing";
    if (!done.empty()) {
        written.clear();
        for (const auto& item : done) written += (written.empty() ? "" : ", ") + item;
    }
    std::string scope =
        ref.namespaced ? fmt::format("in namespace \"{}\"", ns) : std::string("at cluster scope");
    try {
        throw;
    } catch (const kube::ApiError& error) {
        std::string message;
        if (error.isForbidden()) {
            message = fmt::format(
                "missing permission: {} {} {} ({}). Written before this: {}. Ask a cluster admin "
                "for \"{}\" on {}, or use an account that has it; then {}",
                verb, ref.qualifiedName(), scope, error.statusMessage(), written, verb,
                ref.qualifiedName(), finishHint);
        } else {
            message = fmt::format("{} {}/{} {} failed: {}. Written before this: {}; {}", verb,
                                  ref.qualifiedName(), name, scope, error.statusMessage(), written,
                                  finishHint);
        }
        throw kube::ApiError(error.code(), error.reason(), message, error.causes(),
                             error.details());
    } catch (const UsageError&) {
        throw;
    } catch (const Error& error) {
        throw Error(
            fmt::format("{} {}/{} {} failed: {}. Written before this: {}; {}", verb,
                        ref.qualifiedName(), name, scope, error.what(), written, finishHint),
            error.exitCode());
    }
}

}  // namespace rossoctl::app
