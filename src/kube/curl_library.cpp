#include "curl_library.hpp"

#include "shared_library.hpp"

namespace rossoctl::kube::libcurl {

const Functions& functions() {
    static const SharedLibrary library("libcurl.so.4", "libcurl4");
    static const Functions loaded{
        library.function<decltype(Functions::globalInit)>("curl_global_init"),
        library.function<decltype(Functions::easyInit)>("curl_easy_init"),
        library.function<decltype(Functions::easyCleanup)>("curl_easy_cleanup"),
        library.function<decltype(Functions::easyReset)>("curl_easy_reset"),
        library.function<decltype(Functions::easySetopt)>("curl_easy_setopt"),
        library.function<decltype(Functions::easyGetinfo)>("curl_easy_getinfo"),
        library.function<decltype(Functions::easyPerform)>("curl_easy_perform"),
        library.function<decltype(Functions::easySend)>("curl_easy_send"),
        library.function<decltype(Functions::easyRecv)>("curl_easy_recv"),
        library.function<decltype(Functions::easyStrerror)>("curl_easy_strerror"),
        library.function<decltype(Functions::slistAppend)>("curl_slist_append"),
        library.function<decltype(Functions::slistFreeAll)>("curl_slist_free_all"),
        library.function<decltype(Functions::url)>("curl_url"),
        library.function<decltype(Functions::urlCleanup)>("curl_url_cleanup"),
        library.function<decltype(Functions::urlGet)>("curl_url_get"),
        library.function<decltype(Functions::urlSet)>("curl_url_set"),
        library.function<decltype(Functions::free)>("curl_free"),
    };
    return loaded;
}

}  // namespace rossoctl::kube::libcurl
