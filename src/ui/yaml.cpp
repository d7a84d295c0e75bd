#include "rossoctl/ui/yaml.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <ostream>
#include <regex>
#include <streambuf>
#include <string_view>
#include <vector>

#include "rossoctl/errors.hpp"

namespace rossoctl::ui {
namespace {

using nlohmann::json;

// What a YAML 1.1 reader (PyYAML, go-yaml v2) would type: timestamps ("2026-01-02T03:04:05Z")
// and yes/no/on/off. kubectl quotes them, so the value reads back as the string it is.
bool readsAsOtherTypeInYaml11(const std::string& text) {
    static const std::regex timestamp(
        R"(\d{4}-\d\d?-\d\d?([Tt ]|\s+)?(\d\d?:\d\d:\d\d(\.\d*)?\s*(Z|[-+]\d\d?(:\d\d)?)?)?)");
    static const std::regex boolean("y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF");
    // std::regex recurses per character (a date and a million spaces overflowed the stack); no
    // timestamp or boolean is this long.
    if (text.size() > 64) return false;
    return std::regex_match(text, timestamp) || std::regex_match(text, boolean);
}

// YAML 1.2 core schema: only plain (untagged, unquoted) scalars are typed.
json typedScalar(const YAML::Node& node) {
    const std::string& text = node.Scalar();
    if (node.Tag() != "?") return text;
    static const std::regex kInt(R"([-+]?[0-9]+)");
    static const std::regex kFloat(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
    if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL")
        return nullptr;
    if (text == "true" || text == "True" || text == "TRUE") return true;
    if (text == "false" || text == "False" || text == "FALSE") return false;
    // std::regex recurses per character; no number is this long, and the stack stays safe.
    if (text.size() > 256) return text;
    if (std::regex_match(text, kInt)) {
        try {
            return std::stoll(text);
        } catch (const std::out_of_range&) {
            return text;
        }
    }
    if (std::regex_match(text, kFloat)) return std::stod(text);
    return text;
}

json toJson(const YAML::Node& node, int depth) {
    // Hostile input can nest without end; stop long before the stack does.
    if (depth > 200) throw Error("document nested too deeply");
    switch (node.Type()) {
        case YAML::NodeType::Null:
        case YAML::NodeType::Undefined:
            return nullptr;
        case YAML::NodeType::Scalar:
            return typedScalar(node);
        case YAML::NodeType::Sequence: {
            json array = json::array();
            for (const auto& item : node) array.push_back(toJson(item, depth + 1));
            return array;
        }
        case YAML::NodeType::Map: {
            json object = json::object();
            for (const auto& entry : node) {
                if (!entry.first.IsScalar()) throw Error("mapping key is not a scalar");
                object[entry.first.Scalar()] = toJson(entry.second, depth + 1);
            }
            return object;
        }
    }
    return nullptr;
}

void emit(YAML::Emitter& out, const json& value) {
    switch (value.type()) {
        case json::value_t::object:
            if (value.empty()) {
                out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
                return;
            }
            out << YAML::BeginMap;
            for (const auto& [key, item] : value.items()) {
                out << YAML::Key << key << YAML::Value;
                emit(out, item);
            }
            out << YAML::EndMap;
            return;
        case json::value_t::array:
            if (value.empty()) {
                out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
                return;
            }
            out << YAML::BeginSeq;
            for (const auto& item : value) emit(out, item);
            out << YAML::EndSeq;
            return;
        case json::value_t::string: {
            const auto& text = value.get_ref<const std::string&>();
            // Quote strings that would read back as another type ("true", "3", "").
            json reparsed;
            try {
                reparsed = typedScalar(YAML::Load(text));
            } catch (...) {
                reparsed = nullptr;
            }
            if (text.empty() || !reparsed.is_string() || reparsed != value ||
                readsAsOtherTypeInYaml11(text))
                out << YAML::DoubleQuoted << text;
            else
                out << text;
            return;
        }
        case json::value_t::boolean:
            out << (value.get<bool>() ? "true" : "false");
            return;
        case json::value_t::null:
            out << YAML::Null;
            return;
        case json::value_t::number_float: {
            double number = value.get<double>();
            if (std::isfinite(number) && number == std::floor(number) && std::abs(number) < 1e15)
                out << static_cast<long long>(number);
            else
                out << number;
            return;
        }
        default:
            out << value.dump();
            return;
    }
}

}  // namespace

namespace {

// The documents of a stream, split at "---" lines as kubectl does, each parsed with Load:
// yaml-cpp 0.7's LoadAll loops forever on a stray ',' (jbeder/yaml-cpp#1040).
std::vector<YAML::Node> loadDocuments(const std::string& text) {
    std::vector<YAML::Node> documents;
    std::string current;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        std::string_view line(text.data() + pos, end - pos);
        if (line.substr(0, 3) == "---") {
            if (current.find_first_not_of(" \t\r\n") != std::string::npos)
                documents.push_back(YAML::Load(current));
            current.clear();
        } else {
            current.append(line).append("\n");
        }
        pos = end + 1;
    }
    if (current.find_first_not_of(" \t\r\n") != std::string::npos)
        documents.push_back(YAML::Load(current));
    return documents;
}

}  // namespace

json yamlToJson(const std::string& text, const std::string& origin, bool allowMulti) {
    try {
        std::vector<YAML::Node> documents = loadDocuments(text);
        if (allowMulti) {
            json all = json::array();
            for (const auto& doc : documents)
                if (!doc.IsNull()) all.push_back(toJson(doc, 0));
            return all;
        }
        if (documents.empty()) return nullptr;
        return toJson(documents.front(), 0);
    } catch (const YAML::Exception& e) {
        throw Error(origin + ": line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
    } catch (const Error& e) {
        throw Error(origin + ": " + e.what());
    }
}

namespace {
// Passes bytes on in 64 KiB blocks (yaml-cpp writes a character at a time), remembering the
// last one (the text must end in a newline).
class LastByteBuffer : public std::streambuf {
  public:
    explicit LastByteBuffer(std::ostream& out) : out_(out) { setp(block_, block_ + sizeof block_); }
    char last() const { return last_; }

  protected:
    int_type overflow(int_type c) override {
        sync();
        if (c == traits_type::eof()) return traits_type::not_eof(c);
        *pptr() = static_cast<char>(c);
        pbump(1);
        return c;
    }
    int sync() override {
        const std::ptrdiff_t count = pptr() - pbase();
        if (count > 0) {
            last_ = pbase()[count - 1];
            out_.write(pbase(), count);
            setp(block_, block_ + sizeof block_);
        }
        return out_ ? 0 : -1;
    }

  private:
    std::ostream& out_;
    char block_[64 * 1024];
    char last_ = '\n';
};
}  // namespace

void writeYaml(std::ostream& out, const json& value) {
    LastByteBuffer buffer(out);
    std::ostream stream(&buffer);
    {
        YAML::Emitter emitter(stream);
        emitter.SetIndent(2);
        emitter.SetSeqFormat(YAML::Block);
        emit(emitter, value);
    }
    stream.flush();
    if (buffer.last() != '\n') out << '\n';
}

std::string jsonToYaml(const json& value) {
    YAML::Emitter out;
    out.SetIndent(2);
    out.SetSeqFormat(YAML::Block);
    emit(out, value);
    std::string text = out.c_str();
    if (!text.empty() && text.back() != '\n') text += '\n';
    return text;
}

}  // namespace rossoctl::ui
