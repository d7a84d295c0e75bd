#pragma once
// libcurl's functions, called as libcurl::curl_easy_setopt(...), resolved from libcurl.so.4 on
// the first request (see shared_library.hpp) so that commands that send none never load it.
// Its compile-time option checks are macros over the global names; they do not apply here.
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

namespace rossoctl::kube::libcurl {

struct Functions {
    decltype(&::curl_global_init) globalInit;
    decltype(&::curl_easy_init) easyInit;
    decltype(&::curl_easy_cleanup) easyCleanup;
    decltype(&::curl_easy_reset) easyReset;
    decltype(&::curl_easy_setopt) easySetopt;
    decltype(&::curl_easy_getinfo) easyGetinfo;
    decltype(&::curl_easy_perform) easyPerform;
    decltype(&::curl_easy_send) easySend;
    decltype(&::curl_easy_recv) easyRecv;
    decltype(&::curl_easy_strerror) easyStrerror;
    decltype(&::curl_slist_append) slistAppend;
    decltype(&::curl_slist_free_all) slistFreeAll;
    decltype(&::curl_url) url;
    decltype(&::curl_url_cleanup) urlCleanup;
    decltype(&::curl_url_get) urlGet;
    decltype(&::curl_url_set) urlSet;
    decltype(&::curl_free) free;
};

// Loaded once per process (thread-safe); throws Error when libcurl cannot be loaded.
const Functions& functions();

inline CURLcode curl_global_init(long flags) {
    return functions().globalInit(flags);
}
inline CURL* curl_easy_init() {
    return functions().easyInit();
}
inline void curl_easy_cleanup(CURL* easy) {
    functions().easyCleanup(easy);
}
inline void curl_easy_reset(CURL* easy) {
    functions().easyReset(easy);
}
// One typed argument passed on unchanged, as libcurl's variadic setopt and getinfo read it.
template <typename Value>
CURLcode curl_easy_setopt(CURL* easy, CURLoption option, Value value) {
    return functions().easySetopt(easy, option, value);
}
template <typename Out>
CURLcode curl_easy_getinfo(CURL* easy, CURLINFO info, Out out) {
    return functions().easyGetinfo(easy, info, out);
}
inline CURLcode curl_easy_perform(CURL* easy) {
    return functions().easyPerform(easy);
}
inline CURLcode curl_easy_send(CURL* easy, const void* buffer, size_t length, size_t* sent) {
    return functions().easySend(easy, buffer, length, sent);
}
inline CURLcode curl_easy_recv(CURL* easy, void* buffer, size_t length, size_t* received) {
    return functions().easyRecv(easy, buffer, length, received);
}
inline const char* curl_easy_strerror(CURLcode code) {
    return functions().easyStrerror(code);
}
inline curl_slist* curl_slist_append(curl_slist* list, const char* text) {
    return functions().slistAppend(list, text);
}
inline void curl_slist_free_all(curl_slist* list) {
    functions().slistFreeAll(list);
}
inline CURLU* curl_url() {
    return functions().url();
}
inline void curl_url_cleanup(CURLU* url) {
    functions().urlCleanup(url);
}
inline CURLUcode curl_url_get(CURLU* url, CURLUPart part, char** value, unsigned int flags) {
    return functions().urlGet(url, part, value, flags);
}
inline CURLUcode curl_url_set(CURLU* url, CURLUPart part, const char* value, unsigned int flags) {
    return functions().urlSet(url, part, value, flags);
}
inline void curl_free(void* pointer) {
    functions().free(pointer);
}

}  // namespace rossoctl::kube::libcurl
