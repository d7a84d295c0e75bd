// rossoctl completion bash|zsh|fish: scripts generated from the command tree itself.
#include <algorithm>
#include <set>
#include <sstream>

#include "registry.hpp"

namespace rossoctl::commands {
namespace {

struct CompletionOptions {
    std::string shell;
};

struct CommandNode {
    std::string path;  // "sandbox set-env"
    const CLI::App* app;
};

void collect(const CLI::App* app, const std::string& path, std::vector<CommandNode>& out) {
    out.push_back({path, app});
    for (const CLI::App* sub : app->get_subcommands([](const CLI::App* a) {
             return !a->get_name().empty() && a->get_name().rfind("__", 0) != 0;
         }))
        collect(sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), out);
}

std::string subcommandNames(const CLI::App* app) {
    std::string names;
    for (const CLI::App* sub : app->get_subcommands({}))
        if (sub->get_name().rfind("__", 0) != 0)
            names += (names.empty() ? "" : " ") + sub->get_name();
    return names;
}

std::string flagNames(const CLI::App* app, const CLI::App* root) {
    std::string names;
    auto add = [&](const CLI::App* owner) {
        for (const CLI::Option* option : owner->get_options()) {
            for (const auto& name : option->get_lnames()) names += " --" + name;
            for (const auto& name : option->get_snames()) names += " -" + name;
        }
    };
    add(app);
    if (app != root) add(root);
    return names.empty() ? names : names.substr(1);
}

bool takesValue(const CLI::Option* option) {
    return !option->get_positional() && option->get_type_size_max() > 0 &&
           option->get_expected_min() > 0;
}

std::vector<std::string> spellings(const CLI::Option* option) {
    std::vector<std::string> names;
    for (const auto& name : option->get_lnames()) names.push_back("--" + name);
    for (const auto& name : option->get_snames()) names.push_back("-" + name);
    return names;
}

// Flags whose value is a local file or directory: the shell completes paths for them.
bool takesPath(const CLI::Option* option) {
    static const std::vector<std::string> kPathFlags = {
        "kubeconfig",    "certificate-authority", "file",          "artifacts",
        "from-env-file", "envVarsFile",           "env-vars-file", "report"};
    for (const auto& name : option->get_lnames())
        if (std::find(kPathFlags.begin(), kPathFlags.end(), name) != kPathFlags.end()) return true;
    return false;
}

// The values a flag takes, read from the "a|b|c" its help lists (so they cannot drift from
// what the command accepts); -o's "json: {...}" names its only format.
std::string flagValues(const CLI::Option* option) {
    if (option->get_positional() || !takesValue(option)) return "";
    std::istringstream words(option->get_description());
    for (std::string word; words >> word;) {
        while (!word.empty() && std::string(",.;:()").find(word.back()) != std::string::npos)
            word.pop_back();
        if (word.find('|') == std::string::npos) continue;
        std::replace(word.begin(), word.end(), '|', ' ');
        return word;
    }
    if (option->check_lname("output")) {
        const std::string& text = option->get_description();
        const size_t colon = text.find(':');
        if (colon != std::string::npos && text.find(' ') > colon) return text.substr(0, colon);
    }
    return "";
}

// Value-taking flags of a command and the root: "--timeout --cpu -n ...".
std::string valueFlags(const CLI::App* app, const CLI::App* root) {
    std::string names;
    for (const CLI::App* owner : {app, root}) {
        for (const CLI::Option* option : owner->get_options())
            if (takesValue(option))
                for (const auto& name : spellings(option)) names += " " + name;
        if (app == root) break;
    }
    return names.empty() ? names : names.substr(1);
}

bool takesNames(const CLI::App* app) {
    for (const CLI::Option* option : app->get_options())
        if (option->get_positional() && option->get_name() != "--") return true;
    return false;
}

// Which cluster objects a command's positional arguments name, for dynamic completion.
std::string dynamicKind(const std::string& path, const CLI::App* app) {
    if (!takesNames(app)) return "";
    if (path == "sandbox cp") return "sandbox-paths";  // "orders:", then the path is typed
    if (path == "sandbox pool") return "warm-pools";   // NAME: the pool to make or resize
    if (path.rfind("sandbox ", 0) == 0 && path != "sandbox run") return "sandboxes";
    if (path.rfind("agents ", 0) == 0) return "agents";
    if (path.rfind("project ", 0) == 0 && path != "project create") return "projects";
    if (path == "completion") return "shells";
    return "";
}

// The bash function: global flags already typed (-n, --context, --kubeconfig, --server,
// --insecure-skip-tls-verify...) go along to __complete, so live names come from the cluster
// the command line names; the program is the one being completed (rossoctl, kubectl-rosso,
// kubectl rosso). The command path is "node", never "path": under zsh's bashcompinit a local
// "path" empties PATH (and "words" is zsh's own completion array, hence "rw").
// Readline splits words at COMP_WORDBREAKS, '=' and ':' among them: "--namespace=team2" reaches
// the function as "--namespace" "=" "team2". _rossoctl_words joins them back (as bash-completion's
// _get_comp_words_by_ref -n =: does), and the candidates are then cut to the part after the last
// '=' or ':', which is all readline replaces. zsh and kubectl hand over whole words.
const char* kBashHead =
    R"SH(# bash completion for rossoctl (generated by 'rossoctl completion bash')
_rossoctl() {
  local cur prev prog first=1 node="" subs flags valflags dyn values i w cword=0 pre="" lead=""
  local -a rw=() globals=()
  _rossoctl_words
  cur="${rw[cword]}" prev=""
  ((cword > 0)) && prev="${rw[cword-1]}"
  prog="${rw[0]}"
  if [[ ${prog##*/} == kubectl && ${rw[1]} == rosso ]]; then prog=kubectl-rosso; first=2; fi
  [[ ${prog##*/} == kubectl_complete-rosso ]] && prog=kubectl-rosso
  for ((i=first; i<cword; i++)); do
    w="${rw[i]}"
    _rossoctl_node "$node"
    case "$w" in
      -n|--namespace|--context|--kubeconfig|--cluster|--user|-s|--server|--token|--certificate-authority)
        ((i + 1 < cword)) && globals+=("$w" "${rw[i+1]}"); ((i++)); continue ;;
      -n=*|--namespace=*|--context=*|--kubeconfig=*|--cluster=*|--user=*|-s=*|--server=*|--token=*|--certificate-authority=*|--insecure-skip-tls-verify|--insecure-skip-tls-verify=*)
        globals+=("$w"); continue ;;
      -*) [[ $w != *=* && " $valflags " == *" $w "* ]] && ((i++)); continue ;;
    esac
    [[ " $subs " == *" $w "* ]] && node="${node:+$node }$w"
  done
  _rossoctl_node "$node"
  # --flag=value completes the value as "--flag value" would.
  if [[ $cur == -*=* ]]; then prev="${cur%%=*}" pre="${cur%%=*}=" cur="${cur#*=}"; fi
  COMPREPLY=()
  _rossoctl_complete
  for ((i=0; i<${#COMPREPLY[@]}; i++)); do
    w="$pre${COMPREPLY[i]}"
    [[ -n ${_rossoctl_cobra-} ]] && w="${COMPREPLY[i]}"  # kubectl's __complete: the value alone
    COMPREPLY[i]="${w#"$lead"}"
  done
}
_rossoctl_words() {
  local rest="" breaks="" k j=-1 glue w
  if [[ -n ${COMP_LINE+set} ]]; then
    rest="${COMP_LINE:0:${COMP_POINT:-${#COMP_LINE}}}"
    [[ ${COMP_WORDBREAKS-} == *=* ]] && breaks="="
    [[ ${COMP_WORDBREAKS-} == *:* ]] && breaks="$breaks:"
  fi
  for ((k=0; k<=COMP_CWORD && k<${#COMP_WORDS[@]}; k++)); do
    w="${COMP_WORDS[k]}" glue=0
    if [[ -n $breaks ]] && ((j >= 0)) && [[ $rest != [[:space:]]* ]]; then
      [[ $w == ["$breaks"]* || ${rw[j]} == *["$breaks"] ]] && glue=1
    fi
    rest="${rest#"${rest%%[![:space:]]*}"}"
    rest="${rest#"$w"}"
    if ((glue)); then rw[j]="${rw[j]}$w"; else j=$((j + 1)); rw[j]="$w"; fi
    ((k == COMP_CWORD)) && cword=$j
  done
  if ((COMP_CWORD >= ${#COMP_WORDS[@]})); then j=$((j + 1)); rw[j]="" cword=$j; fi
  if [[ -n $breaks && ${rw[cword]} == *["$breaks"]* ]]; then
    w="${rw[cword]}"
    lead="${w%"${w##*["$breaks"]}"}"
  fi
}
_rossoctl_complete() {
  case "$prev" in
    -n|--namespace) _rossoctl_live projects; return ;;
)SH";

const char* kBashTail = R"SH(  esac
  values=$(_rossoctl_values "$node" "$prev")
  if [[ -n $values ]]; then COMPREPLY=($(compgen -W "$values" -- "$cur")); return; fi
  [[ " $valflags " == *" $prev "* ]] && return  # a value rossoctl cannot guess
  [[ -n $pre ]] && return                        # --flag=... of a flag that takes no value
  if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "$flags" -- "$cur")); return; fi
  if [[ -n $subs ]]; then COMPREPLY=($(compgen -W "$subs" -- "$cur")); return; fi
  if [[ $dyn == shells ]]; then COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur")); return; fi
  if [[ $dyn == sandbox-paths ]]; then _rossoctl_copy; return; fi
  [[ -n $dyn ]] && _rossoctl_live "$dyn"
}
_rossoctl_live() {
  COMPREPLY=($(compgen -W "$(timeout 2 "$prog" __complete "$1" "${globals[@]}" 2>/dev/null)" -- "$cur"))
}
# Local files; "plain": without readline's file name quoting (which would turn "orders:" into
# "orders\:"). zsh's bashcompinit compgen -f globs the whole word ("--kubeconfig=kub*").
_rossoctl_files() {
  local f
  [[ ${1-} == plain ]] || compopt -o filenames 2>/dev/null
  if [[ -n ${ZSH_VERSION-} ]]; then
    for f in "$cur"*; do [[ -e $f ]] && COMPREPLY+=("$f"); done
  else
    COMPREPLY+=($(compgen -f -- "$cur"))
  fi
  _rossoctl_paths=1
}
# sandbox cp SRC DST: "NAME:" for a sandbox (then its path is typed), else a local file.
_rossoctl_copy() {
  [[ $cur == *:* ]] && return
  _rossoctl_live sandbox-paths
  if ((${#COMPREPLY[@]} == 0)); then _rossoctl_files; return; fi
  compopt -o nospace 2>/dev/null
  _rossoctl_files plain
}
)SH";

// kubectl (1.26+) completes "kubectl rosso ..." by running kubectl_complete-rosso with the words;
// it answers in the __complete protocol kubectl's own plugins use: candidates, then ":directive".
const char* kKubectlPlugin = R"SH(#!/usr/bin/env bash
# kubectl_complete-rosso: completes "kubectl rosso ..." with rossoctl's bash completion
# (generated by 'rossoctl completion kubectl-plugin'; install it next to kubectl-rosso).
source <(kubectl-rosso completion bash 2>/dev/null || rossoctl completion bash)
unset COMP_LINE COMP_POINT
COMP_WORDS=(kubectl-rosso "$@")
COMP_CWORD=$#
_rossoctl_paths=0 _rossoctl_cobra=1
_rossoctl
[ ${#COMPREPLY[@]} -gt 0 ] && printf '%s\n' "${COMPREPLY[@]}"
# 0: the shell may complete file names; 4: it must not.
[ "$_rossoctl_paths" = 1 ] && echo :0 || echo :4
)SH";

std::string bashScript(const CLI::App& root) {
    std::vector<CommandNode> nodes;
    collect(&root, "", nodes);
    std::ostringstream s;
    s << kBashHead;
    std::set<std::string> pathFlags;
    for (const auto& node : nodes)
        for (const CLI::Option* option : node.app->get_options())
            if (takesPath(option))
                for (const auto& name : spellings(option)) pathFlags.insert(name);
    std::string pattern;
    for (const auto& name : pathFlags) pattern += (pattern.empty() ? "" : "|") + name;
    s << "    " << pattern << ") _rossoctl_files; return ;;\n" << kBashTail;
    s << "_rossoctl_node() {\n"
         "  subs=\"\" flags=\"\" valflags=\"\" dyn=\"\"\n"
         "  case \"$1\" in\n";
    for (const auto& node : nodes) {
        s << "    \"" << node.path << "\") subs=\"" << subcommandNames(node.app) << "\" flags=\""
          << flagNames(node.app, &root) << "\" valflags=\"" << valueFlags(node.app, &root)
          << "\" dyn=\"" << dynamicKind(node.path, node.app) << "\" ;;\n";
    }
    s << "  esac\n"
         "}\n"
         "_rossoctl_values() {\n"
         "  case \"$1|$2\" in\n";
    for (const auto& node : nodes) {
        for (const CLI::App* owner : {node.app, &root}) {
            for (const CLI::Option* option : owner->get_options()) {
                const std::string values = flagValues(option);
                if (values.empty()) continue;
                std::string cases;
                for (const auto& name : spellings(option))
                    cases += (cases.empty() ? "" : "|") + ("\"" + node.path + "|" + name + "\"");
                s << "    " << cases << ") echo \"" << values << "\" ;;\n";
            }
            if (node.app == &root) break;
        }
    }
    s << "  esac\n"
         "}\n"
         "complete -F _rossoctl rossoctl kubectl-rosso\n";
    return s.str();
}

// compinit autoloads _rossoctl from $fpath: the file's text becomes the body of the function
// _rossoctl and runs at the first TAB. So the body defines the bash functions under another
// name (_rossoctl_bash, which must not replace the function being run), rebinds rossoctl and
// kubectl-rosso to them for the TABs after, and completes this first TAB too. Sourced instead
// (funcstack[1] is then the file), it only defines and binds.
std::string zshScript(const CLI::App& root) {
    std::string bash = bashScript(root);
    auto replaceAll = [&bash](const std::string& from, const std::string& to) {
        for (size_t at = bash.find(from); at != std::string::npos;
             at = bash.find(from, at + to.size()))
            bash.replace(at, from.size(), to);
    };
    replaceAll("\n_rossoctl() {", "\n_rossoctl_bash() {");
    replaceAll("complete -F _rossoctl ", "complete -F _rossoctl_bash ");
    return "#compdef rossoctl kubectl-rosso\n"
           "# zsh completion for rossoctl (generated by 'rossoctl completion zsh'): the bash\n"
           "# completion run through zsh's bashcompinit.\n"
           "autoload -U +X bashcompinit && bashcompinit\n" +
           bash +
           "# Autoloaded by compinit, this file is the function _rossoctl: complete this TAB too.\n"
           "if [[ ${funcstack[1]} == _rossoctl ]]; then _bash_complete -F _rossoctl_bash; fi\n";
}

std::string fishEscape(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '\'' || c == '\\') out += '\\';
        if (c == '\n') break;
        out += c;
    }
    return out;
}

// fish: each line is tied to the whole command path typed so far (__rossoctl_path walks the
// words as rossoctl parses them), so "agents get" never offers what "sandbox get" takes.
// Live names go with the global flags already typed.
const char* kFishHead =
    R"SH(# fish completion for rossoctl (generated by 'rossoctl completion fish')
function __rossoctl_live
    set -l tokens (commandline -opc)
    set -l prog $tokens[1]
    test (basename $prog) = kubectl; and set prog kubectl-rosso
    set -l globals
    for i in (seq 2 (count $tokens))
        switch $tokens[$i]
            case -n --namespace --context --kubeconfig --cluster --user -s --server --token --certificate-authority
                set -l next (math $i + 1)
                test $next -le (count $tokens); and set globals $globals $tokens[$i] $tokens[$next]
            case '-n=*' '--namespace=*' '--context=*' '--kubeconfig=*' '--cluster=*' '--user=*' '-s=*' '--server=*' '--token=*' '--certificate-authority=*' --insecure-skip-tls-verify '--insecure-skip-tls-verify=*'
                set globals $globals $tokens[$i]
        end
    end
    timeout 2 $prog __complete $argv[1] $globals 2>/dev/null
end
# The subcommands typed so far ("agents get"), flags and their values skipped.
function __rossoctl_path
    set -l tokens (commandline -opc)
    set -l node
    set -l skip 0
    for token in $tokens[2..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        switch $token
            case '-*=*'
                continue
            case '-*'
                contains -- $token (__rossoctl_valflags "$node"); and set skip 1
                continue
        end
        contains -- $token (__rossoctl_subs "$node"); and set node $node $token
    end
    echo "$node"
end
function __rossoctl_seen_path
    set -l typed (__rossoctl_path)
    test "$typed" = "$argv"
end
complete -c rossoctl -f
complete -c kubectl-rosso -w rossoctl
)SH";

// One fish line per option: files for path flags, the listed values, or live project names.
std::string fishOption(const std::string& condition, const CLI::Option* option) {
    std::string line = "complete -c rossoctl";
    if (!condition.empty()) line += " -n '" + condition + "'";
    for (const auto& name : option->get_lnames()) line += " -l " + name;
    for (const auto& name : option->get_snames()) line += " -s " + name;
    if (takesPath(option))
        line += " -r -F";
    else if (option->check_lname("namespace"))
        line += " -x -a '(__rossoctl_live projects)'";
    else if (!flagValues(option).empty())
        line += " -x -a '" + flagValues(option) + "'";
    else if (takesValue(option))
        line += " -x";
    return line + " -d '" + fishEscape(option->get_description()) + "'\n";
}

std::string fishList(const std::string& words) {
    return words.empty() ? "" : "printf '%s\\n' " + words;
}

std::string fishScript(const CLI::App& root) {
    std::vector<CommandNode> nodes;
    collect(&root, "", nodes);
    std::ostringstream s;
    s << kFishHead;
    s << "function __rossoctl_subs\n    switch \"$argv\"\n";
    for (const auto& node : nodes) {
        const std::string subs = subcommandNames(node.app);
        if (!subs.empty())
            s << "        case '" << node.path << "'\n            " << fishList(subs) << "\n";
    }
    s << "    end\nend\nfunction __rossoctl_valflags\n    switch \"$argv\"\n";
    for (const auto& node : nodes)
        s << "        case '" << node.path << "'\n            "
          << fishList(valueFlags(node.app, &root)) << "\n";
    s << "    end\nend\n";
    for (const auto& node : nodes) {
        const std::string seen =
            "__rossoctl_seen_path" + (node.path.empty() ? "" : " " + node.path);
        for (const CLI::App* sub : node.app->get_subcommands({})) {
            if (sub->get_name().rfind("__", 0) == 0) continue;
            s << "complete -c rossoctl -n '" << seen << "' -a " << sub->get_name() << " -d '"
              << fishEscape(sub->get_description()) << "'\n";
        }
        if (node.path.empty()) continue;
        for (const CLI::Option* option : node.app->get_options())
            if (!option->get_positional() && !option->get_lnames().empty())
                s << fishOption(seen, option);
        const std::string kind = dynamicKind(node.path, node.app);
        if (kind == "shells")
            s << "complete -c rossoctl -n '" << seen << "' -a 'bash zsh fish'\n";
        else if (kind == "sandbox-paths")  // "orders:" for a sandbox, else a local file
            s << "complete -c rossoctl -n '" << seen
              << "' -F -a '(__rossoctl_live sandbox-paths)'\n";
        else if (!kind.empty())
            s << "complete -c rossoctl -n '" << seen << "' -a '(__rossoctl_live " << kind << ")'\n";
    }
    for (const CLI::Option* option : root.get_options())
        if (!option->get_positional() && !option->get_lnames().empty()) s << fishOption("", option);
    return s.str();
}

int runCompletion(app::Context& context, CompletionOptions& options, const CLI::App& root) {
    if (options.shell == "bash")
        context.out() << bashScript(root);
    else if (options.shell == "zsh")
        context.out() << zshScript(root);
    else if (options.shell == "fish")
        context.out() << fishScript(root);
    else if (options.shell == "kubectl-plugin")
        context.out() << kKubectlPlugin;
    else
        throw UsageError("unsupported shell \"" + options.shell +
                         "\"; use bash, zsh, fish or kubectl-plugin");
    return 0;
}

}  // namespace

void registerCompletion(CLI::App& root, CommandHost& host) {
    auto options = std::make_shared<CompletionOptions>();
    auto* command = root.add_subcommand("completion", "Print a shell completion script");
    command
        ->add_option("shell", options->shell,
                     "bash, zsh or fish (kubectl-plugin: the kubectl_complete-rosso script)")
        ->required();
    command->footer(
        "Examples:\n"
        "  source <(rossoctl completion bash)\n"
        "  rossoctl completion zsh > \"${fpath[1]}/_rossoctl\"\n"
        "  rossoctl completion fish > ~/.config/fish/completions/rossoctl.fish\n"
        "  rossoctl completion kubectl-plugin > ~/bin/kubectl_complete-rosso  # kubectl rosso "
        "<TAB>");
    command->callback([&host, options] {
        auto& context = host.context();
        host.setExitCode(app::runCommand(
            context, [&](app::Context& c) { return runCompletion(c, *options, host.root()); }));
    });
}

}  // namespace rossoctl::commands
