// rossoctl __manpage DIR: writes man/rossoctl.1 and one page per command group from the same
// help text --help prints, so the pages cannot drift from the binary.
#include <fstream>
#include <sstream>

#include "conventions.hpp"
#include "registry.hpp"

namespace rossoctl::commands {
namespace {

struct ManpageOptions {
    std::string directory;
};

// troff: a backslash or a leading dot/quote would be read as markup.
std::string roff(const std::string& text) {
    std::string out;
    bool lineStart = true;
    for (char c : text) {
        if (lineStart && (c == '.' || c == '\'')) out += "\\&";
        if (c == '\\')
            out += "\\e";
        else if (c == '-')
            out += "\\-";
        else
            out += c;
        lineStart = c == '\n';
    }
    return out;
}

bool visible(const CLI::App* app) {
    return !app->get_name().empty() && app->get_name().rfind("__", 0) != 0;
}

void writeOptions(std::ostringstream& page, const CLI::App* app) {
    for (const CLI::Option* option : app->get_options()) {
        if (option->get_positional() || option->get_name() == "--help" ||
            option->get_name().empty())
            continue;
        std::string names = optionDisplayName(option);
        page << ".TP\n.B " << roff(names) << "\n" << roff(option->get_description());
        if (!option->get_default_str().empty())
            page << " (default " << roff(option->get_default_str()) << ")";
        page << "\n";
    }
}

std::string usageOf(const CLI::App* app, const std::string& path) {
    std::string usage = "rossoctl " + path;
    for (const CLI::Option* option : app->get_options())
        if (option->get_positional()) usage += " " + option->get_name();
    if (!app->get_subcommands(visible).empty()) usage += " COMMAND";
    return usage + " [flags]";
}

void writeCommand(std::ostringstream& page, const CLI::App* app, const std::string& path) {
    page << ".SS \"" << roff(path) << "\"\n" << roff(app->get_description()) << "\n";
    page << ".PP\n.B " << roff(usageOf(app, path)) << "\n";
    writeOptions(page, app);
    if (!app->get_footer().empty()) page << ".PP\n.nf\n" << roff(app->get_footer()) << "\n.fi\n";
    for (const CLI::App* sub : app->get_subcommands(visible))
        writeCommand(page, sub, path + " " + sub->get_name());
}

std::string header(const std::string& name, const std::string& summary) {
    return ".TH " + roff(name) +
           " 1 \"\" \"rossoctl " ROSSOCTL_VERSION
           "\" \"User Commands\"\n"
           ".SH NAME\n" +
           roff(name) + " \\- " + roff(summary) + "\n";
}

std::string exitStatus() {
    std::string section = ".SH EXIT STATUS\n";
    for (const auto& exit : exitCodes())
        section += ".TP\n.B " + std::string(exit.code) + "\n" + roff(exit.meaning) + "\n";
    return section;
}

std::string rootPage(const CLI::App& root) {
    std::ostringstream page;
    page << header("rossoctl", "deploy AI agents into hardened Kubernetes sandboxes");
    page << ".SH SYNOPSIS\n.B rossoctl\nCOMMAND [flags]\n";
    page << ".SH DESCRIPTION\n" << roff(root.get_description()) << "\n";
    page << ".SH COMMANDS\n";
    for (const CLI::App* sub : root.get_subcommands(visible)) {
        bool group = !sub->get_subcommands(visible).empty();
        page << ".TP\n.B " << roff(sub->get_name()) << "\n" << roff(sub->get_description());
        if (group) page << " (see \\fBrossoctl\\-" << roff(sub->get_name()) << "\\fR(1))";
        page << "\n";
    }
    page << ".SH GLOBAL FLAGS\n";
    writeOptions(page, &root);
    page << ".SH ENVIRONMENT\n.TP\n.B KUBECONFIG\nA colon-separated list of kubeconfig files, "
            "merged as kubectl does.\n.TP\n.B NO_COLOR\nSet to turn color off.\n";
    page << exitStatus();
    page << ".SH SEE ALSO\n";
    std::string sep;
    for (const CLI::App* sub : root.get_subcommands(visible))
        if (!sub->get_subcommands(visible).empty()) {
            page << sep << "\\fBrossoctl\\-" << roff(sub->get_name()) << "\\fR(1)";
            sep = ", ";
        }
    page << ", \\fBkubectl\\fR(1)\n";
    return page.str();
}

std::string groupPage(const CLI::App* group) {
    std::ostringstream page;
    const std::string name = "rossoctl-" + group->get_name();
    page << header(name, group->get_description());
    page << ".SH SYNOPSIS\n.B rossoctl " << roff(group->get_name()) << "\nCOMMAND [flags]\n";
    page << ".SH COMMANDS\n";
    for (const CLI::App* sub : group->get_subcommands(visible))
        writeCommand(page, sub, group->get_name() + " " + sub->get_name());
    page << exitStatus();
    page << ".SH SEE ALSO\n\\fBrossoctl\\fR(1)\n";
    return page.str();
}

void writeFile(const std::string& path, const std::string& text) {
    std::ofstream file(path, std::ios::trunc);
    if (!file) throw Error("cannot write " + path);
    file << text;
}

int runManpage(app::Context& context, ManpageOptions& options, const CLI::App& root) {
    writeFile(options.directory + "/rossoctl.1", rootPage(root));
    for (const CLI::App* sub : root.get_subcommands(visible))
        if (!sub->get_subcommands(visible).empty())
            writeFile(options.directory + "/rossoctl-" + sub->get_name() + ".1", groupPage(sub));
    context.err() << "man pages written to " << options.directory << '\n';
    return 0;
}

}  // namespace

void registerManpage(CLI::App& root, CommandHost& host) {
    auto options = std::make_shared<ManpageOptions>();
    auto* command = root.add_subcommand("__manpage", "");
    command->group("");  // hidden: used by scripts/generate-docs
    command->add_option("directory", options->directory)->required();
    command->callback([&host, options] {
        host.setExitCode(app::runCommand(
            host.context(), [&](app::Context& c) { return runManpage(c, *options, host.root()); }));
    });
}

}  // namespace rossoctl::commands
