// CoreDNS's Corefile, parsed as far as judging recursion needs: comments, server blocks with
// several keys (".:53", "dns://.", "cluster.local:53"), snippets "(name) {…}" and their
// imports, top-level directives and their sub-blocks (left out), file imports (kept, unread).
#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "rossoctl/app/project_dns.hpp"

namespace rossoctl::app {

namespace {

using Directives = std::vector<std::vector<std::string>>;

std::vector<std::string> words(const std::string& line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    for (std::string word; in >> word;) out.push_back(word);
    return out;
}

std::string joined(const std::vector<std::string>& words) {
    std::string line;
    for (const auto& word : words) line += (line.empty() ? "" : " ") + word;
    return line;
}

bool isSnippetName(const std::string& key) {
    return key.size() > 2 && key.front() == '(' && key.back() == ')';
}

// What one Corefile may cost to read, in bytes parsed plus directives expanded: ten snippets each
// importing the next ten times would expand to 10^9 directives within the depth bound.
constexpr size_t kMaxCorefileWork = 1'000'000;

struct Parse {
    const CorefileFiles& files;
    std::map<std::string, Directives> snippets;
    std::vector<std::string>& fileImports;
    size_t& work;
};

std::optional<Corefile> parseText(const std::string& text, const CorefileFiles& files, int depth,
                                  std::string& problem, size_t& work);

// The mounted files an import names (a glob, relative to the Corefile's directory); nullopt
// when it names a place outside every mounted directory (a file verify cannot see).
std::optional<std::vector<std::string>> importedFiles(const std::string& pattern,
                                                      const CorefileFiles& files) {
    if (!files.files || !files.directories) return std::nullopt;
    std::string path = pattern;
    if (path.front() != '/') {
        if (files.corefileDirectory.empty()) return std::nullopt;
        path = files.corefileDirectory + "/" + path;
    }
    const std::string directory = path.substr(0, path.rfind('/'));
    const bool mounted = std::any_of(
        files.directories->begin(), files.directories->end(), [&](const std::string& mount) {
            return directory == mount || directory.rfind(mount + "/", 0) == 0;
        });
    if (!mounted) return files.files->count(path) ? std::optional(std::vector{path}) : std::nullopt;
    std::vector<std::string> matched;
    for (const auto& [file, text] : *files.files)
        if (fnmatch(path.c_str(), file.c_str(), FNM_PATHNAME) == 0) matched.push_back(file);
    return matched;
}

// A block's directives with "import X" replaced by the snippet X or the mounted files X names
// (depth bounds a loop).
bool expandImports(const Directives& in, Parse& parse, int depth, Directives& out) {
    if (depth > 10) return false;
    for (const auto& directive : in) {
        // Every directive counts, imports too: snippets importing snippets fan out.
        if (++parse.work > kMaxCorefileWork) return false;
        if (directive.front() != "import") {
            out.push_back(directive);
            continue;
        }
        const auto snippet =
            directive.size() == 2 ? parse.snippets.find(directive[1]) : parse.snippets.end();
        if (snippet != parse.snippets.end()) {
            if (!expandImports(snippet->second, parse, depth + 1, out)) return false;
            continue;
        }
        const auto paths =
            directive.size() == 2 ? importedFiles(directive[1], parse.files) : std::nullopt;
        if (parse.files.files) parse.work += parse.files.files->size();  // the glob's matching
        if (!paths) {
            parse.fileImports.push_back(joined(directive));
            continue;
        }
        for (const auto& path : *paths) {
            std::string problem;
            const auto block = parseText("imported {\n" + parse.files.files->at(path) + "\n}\n",
                                         parse.files, depth + 1, problem, parse.work);
            if (!block || block->servers.size() != 1) return false;
            const auto& directives = block->servers.front().directives;
            parse.work += directives.size();
            if (parse.work > kMaxCorefileWork) return false;
            out.insert(out.end(), directives.begin(), directives.end());
            parse.fileImports.insert(parse.fileImports.end(), block->fileImports.begin(),
                                     block->fileImports.end());
        }
    }
    return true;
}

}  // namespace

std::string corefileZone(std::string key) {
    if (const auto scheme = key.find("://"); scheme != std::string::npos)
        key = key.substr(scheme + 3);
    if (const auto colon = key.rfind(':'); colon != std::string::npos) key = key.substr(0, colon);
    for (auto& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (key.empty() || key == ".") return ".";
    return key.back() == '.' ? key : key + ".";
}

namespace {

std::optional<Corefile> parseText(const std::string& text, const CorefileFiles& files, int depth,
                                  std::string& problem, size_t& work) {
    auto refuse = [&](const std::string& why) -> std::optional<Corefile> {
        if (problem.empty()) problem = why;
        return std::nullopt;
    };
    if (depth > 10) return refuse("its imports import each other in a loop");
    work += text.size() + 1;
    if (work > kMaxCorefileWork)
        return refuse("its imports expand past a million directives and bytes");
    // CoreDNS substitutes {$VAR} and {%VAR%} before parsing: the text read is not what runs.
    if (text.find("{$") != std::string::npos || text.find("{%") != std::string::npos)
        return refuse(
            "it uses environment placeholders ({$…}), so what CoreDNS runs is not "
            "the text read");
    Corefile corefile;
    std::vector<std::pair<std::vector<std::string>, Directives>> blocks;  // keys, directives
    std::istringstream in(text);
    int nesting = 0;
    std::vector<std::string> pendingKeys;  // a block's keys may span lines before its "{"
    std::vector<std::string> directive;
    std::vector<std::vector<std::string>> topImports;
    for (std::string raw; std::getline(in, raw);) {
        const auto hash = raw.find('#');
        const std::string line = hash == std::string::npos ? raw : raw.substr(0, hash);
        // Braces are tokens of their own here: split them off the words around them.
        std::string spaced;
        for (char c : line)
            spaced += c == '{' || c == '}' ? std::string(" ") + c + " " : std::string(1, c);
        const auto tokens = words(spaced);
        if (nesting == 0 && pendingKeys.empty() && !tokens.empty() && tokens.front() == "import") {
            topImports.push_back(tokens);  // server blocks from elsewhere
            continue;
        }
        for (const auto& word : tokens) {
            if (word == "{") {
                if (nesting == 0) {
                    std::vector<std::string> keys;
                    for (auto key : pendingKeys) {
                        key.erase(std::remove(key.begin(), key.end(), ','), key.end());
                        if (!key.empty()) keys.push_back(key);
                    }
                    pendingKeys.clear();
                    if (keys.empty()) return refuse("a block has no key");
                    blocks.push_back({keys, {}});
                } else if (nesting == 1 && !directive.empty()) {
                    blocks.back().second.push_back(directive);
                    directive.clear();
                }
                ++nesting;
            } else if (word == "}") {
                if (nesting == 0) return refuse("a \"}\" closes nothing");
                if (nesting == 1 && !directive.empty()) blocks.back().second.push_back(directive);
                directive.clear();
                --nesting;
            } else if (nesting == 0) {
                pendingKeys.push_back(word);
            } else if (nesting == 1) {
                directive.push_back(word);
            }
        }
        if (nesting == 1 && !directive.empty()) blocks.back().second.push_back(directive);
        directive.clear();
    }
    if (nesting != 0) return refuse("its braces do not balance");
    if (!pendingKeys.empty()) return refuse("it ends with keys and no block");
    Parse parse{files, {}, corefile.fileImports, work};
    for (const auto& [keys, directives] : blocks)
        if (keys.size() == 1 && isSnippetName(keys.front()))
            parse.snippets[keys.front().substr(1, keys.front().size() - 2)] = directives;
    for (const auto& [keys, directives] : blocks) {
        if (keys.size() == 1 && isSnippetName(keys.front())) continue;
        CorefileServer server;
        for (const auto& key : keys) server.zones.push_back(corefileZone(key));
        if (!expandImports(directives, parse, depth, server.directives))
            return refuse(
                "its imports import each other in a loop, expand past a million directives, or "
                "an imported file is not understood");
        corefile.servers.push_back(std::move(server));
    }
    for (const auto& import : topImports) {
        const auto paths = import.size() == 2 ? importedFiles(import[1], files) : std::nullopt;
        if (!paths) {
            corefile.fileImports.push_back(joined(import));
            continue;
        }
        for (const auto& path : *paths) {
            const auto servers = parseText(files.files->at(path), files, depth + 1, problem, work);
            if (!servers) return std::nullopt;
            corefile.servers.insert(corefile.servers.end(), servers->servers.begin(),
                                    servers->servers.end());
            corefile.fileImports.insert(corefile.fileImports.end(), servers->fileImports.begin(),
                                        servers->fileImports.end());
        }
    }
    return corefile;
}

}  // namespace

std::optional<Corefile> parseCorefile(const std::string& text, std::string* problem,
                                      const CorefileFiles& files) {
    std::string why;
    size_t work = 0;
    auto corefile = parseText(text, files, 0, why, work);
    if (!corefile && problem) *problem = why;
    return corefile;
}

}  // namespace rossoctl::app
