#include "telemetry/metrics.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

namespace hypertopo::telemetry {

struct MetricsRegistry::Family {
  std::string name;
  std::string help;
  Type type = Type::kCounter;
  std::vector<std::string> labels;
  std::vector<double> bounds;  // histograms
  std::unique_ptr<Counter> counter;
  std::unique_ptr<Gauge> gauge;
  std::unique_ptr<Histogram> histogram;
};

namespace {

void check_labels(const std::string& name, std::size_t expected, const LabelValues& labels) {
  if (name.empty() || labels.size() == expected) return;
  throw std::logic_error("metric " + name + ": " + std::to_string(labels.size()) + " label values given, " +
                         std::to_string(expected) + " label names registered");
}

bool is_metric_name(const std::string& name) {
  if (name.empty()) return false;
  auto first = [](char c) {
    return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_' || c == ':';
  };
  if (!first(name.front())) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return first(c) || std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

bool is_label_name(const std::string& name) {
  if (name.empty() || name.starts_with("__")) return false;  // "__" is reserved for Prometheus itself
  if (std::isdigit(static_cast<unsigned char>(name.front())) != 0) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; });
}

const char* type_name(int type) {
  switch (type) {
    case 0:
      return "counter";
    case 1:
      return "gauge";
    default:
      return "histogram";
  }
}

// Integers as integers ("3"), other values in the shortest form that reads back exactly ("0.25").
std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::trunc(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

std::string escape_help(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string escape_label_value(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// {a="x",b="y"} (empty when there are no labels); `le` is appended for histogram buckets.
std::string label_set(const std::vector<std::string>& names, const LabelValues& values,
                      const std::string* le) {
  if (names.empty() && le == nullptr) return "";
  std::string out = "{";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ",";
    out += names[i] + "=\"" + escape_label_value(values[i]) + "\"";
  }
  if (le != nullptr) out += std::string(names.empty() ? "" : ",") + "le=\"" + *le + "\"";
  return out + "}";
}

}  // namespace

void Counter::inc(const LabelValues& labels, double by) {
  check_labels(name_, label_count_, labels);
  if (!(by >= 0))
    throw std::logic_error("counter " + name_ + ": cannot go down (inc by " + format_value(by) + ")");
  std::lock_guard lock(mutex_);
  values_[labels] += by;
}

double Counter::value(const LabelValues& labels) const {
  std::lock_guard lock(mutex_);
  auto it = values_.find(labels);
  return it == values_.end() ? 0 : it->second;
}

void Gauge::set(const LabelValues& labels, double value) {
  check_labels(name_, label_count_, labels);
  std::lock_guard lock(mutex_);
  values_[labels] = value;
}

void Gauge::add(const LabelValues& labels, double by) {
  check_labels(name_, label_count_, labels);
  std::lock_guard lock(mutex_);
  values_[labels] += by;
}

void Gauge::replace(std::map<LabelValues, double> series) {
  for (const auto& [labels, value] : series) check_labels(name_, label_count_, labels);
  std::lock_guard lock(mutex_);
  values_ = std::move(series);
}

double Gauge::value(const LabelValues& labels) const {
  std::lock_guard lock(mutex_);
  auto it = values_.find(labels);
  return it == values_.end() ? 0 : it->second;
}

void Histogram::observe(const LabelValues& labels, double value) {
  check_labels(name_, label_count_, labels);
  std::lock_guard lock(mutex_);
  Series& s = series_[labels];
  if (s.buckets.size() != bounds_.size()) s.buckets.assign(bounds_.size(), 0);
  // A bucket counts values <= its bound; NaN is in no finite bucket, only in +Inf (as Prometheus does).
  if (!std::isnan(value)) {
    auto it = std::lower_bound(bounds_.begin(), bounds_.end(), value);
    if (it != bounds_.end()) ++s.buckets[static_cast<std::size_t>(it - bounds_.begin())];
  }
  s.sum += value;
  ++s.count;
}

std::uint64_t Histogram::count(const LabelValues& labels) const {
  std::lock_guard lock(mutex_);
  auto it = series_.find(labels);
  return it == series_.end() ? 0 : it->second.count;
}

double Histogram::sum(const LabelValues& labels) const {
  std::lock_guard lock(mutex_);
  auto it = series_.find(labels);
  return it == series_.end() ? 0 : it->second.sum;
}

std::shared_ptr<MetricsRegistry::Family> MetricsRegistry::family(const std::string& name,
                                                                 const std::string& help, Type type,
                                                                 std::vector<std::string> labels,
                                                                 std::vector<double> bounds) {
  const char* kind = type_name(static_cast<int>(type));
  if (!is_metric_name(name))
    throw std::logic_error("metric '" + name + "': not a valid Prometheus metric name");
  std::set<std::string> seen;
  for (const auto& label : labels) {
    if (!is_label_name(label))
      throw std::logic_error("metric " + name + ": '" + label + "' is not a label name");
    if (type == Type::kHistogram && label == "le")
      throw std::logic_error("metric " + name + ": 'le' is reserved for histogram buckets");
    if (!seen.insert(label).second)
      throw std::logic_error("metric " + name + ": label '" + label + "' twice");
  }
  if (type == Type::kHistogram) {
    if (!bounds.empty() && std::isinf(bounds.back()) && bounds.back() > 0)
      bounds.pop_back();  // +Inf is implied
    for (std::size_t i = 0; i < bounds.size(); ++i) {
      if (!std::isfinite(bounds[i]) || (i > 0 && !(bounds[i] > bounds[i - 1])))
        throw std::logic_error("metric " + name + ": bucket bounds must be finite and increasing");
    }
  }
  std::lock_guard lock(mutex_);
  if (auto it = families_.find(name); it != families_.end()) {
    const Family& f = *it->second;
    if (f.type != type || f.labels != labels || f.bounds != bounds) {
      throw std::logic_error("metric " + name + ": registered again as a " + kind +
                             " with other labels or buckets (first as a " +
                             type_name(static_cast<int>(f.type)) + ")");
    }
    return it->second;
  }
  auto f = std::make_shared<Family>();
  f->name = name;
  f->help = help;
  f->type = type;
  f->labels = std::move(labels);
  f->bounds = bounds;
  switch (type) {
    case Type::kCounter:
      f->counter = std::make_unique<Counter>();
      f->counter->name_ = name;
      f->counter->label_count_ = f->labels.size();
      break;
    case Type::kGauge:
      f->gauge = std::make_unique<Gauge>();
      f->gauge->name_ = name;
      f->gauge->label_count_ = f->labels.size();
      break;
    case Type::kHistogram:
      f->histogram = std::make_unique<Histogram>();
      f->histogram->name_ = name;
      f->histogram->label_count_ = f->labels.size();
      f->histogram->bounds_ = std::move(bounds);
      break;
  }
  families_[name] = f;
  return f;
}

Counter& MetricsRegistry::counter(const std::string& name, const std::string& help,
                                  std::vector<std::string> labels) {
  return *family(name, help, Type::kCounter, std::move(labels), {})->counter;
}

Gauge& MetricsRegistry::gauge(const std::string& name, const std::string& help,
                              std::vector<std::string> labels) {
  return *family(name, help, Type::kGauge, std::move(labels), {})->gauge;
}

Histogram& MetricsRegistry::histogram(const std::string& name, const std::string& help,
                                      std::vector<std::string> labels, std::vector<double> bounds) {
  return *family(name, help, Type::kHistogram, std::move(labels), std::move(bounds))->histogram;
}

std::string MetricsRegistry::render() const {
  std::vector<std::shared_ptr<Family>> families;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [name, f] : families_) families.push_back(f);
  }
  std::string out;
  auto plain = [&](const Family& f, std::map<LabelValues, double> values) {
    if (f.labels.empty() && values.empty()) values[{}] = 0;  // the one series of a label-less family
    for (const auto& [labels, v] : values)
      out += f.name + label_set(f.labels, labels, nullptr) + " " + format_value(v) + "\n";
  };
  for (const auto& fp : families) {
    const Family& f = *fp;
    out += "# HELP " + f.name + " " + escape_help(f.help) + "\n";
    out += "# TYPE " + f.name + " " + type_name(static_cast<int>(f.type)) + "\n";
    if (f.type == Type::kCounter) {
      std::unique_lock lock(f.counter->mutex_);
      auto values = f.counter->values_;
      lock.unlock();
      plain(f, std::move(values));
    } else if (f.type == Type::kGauge) {
      std::unique_lock lock(f.gauge->mutex_);
      auto values = f.gauge->values_;
      lock.unlock();
      plain(f, std::move(values));
    } else {
      std::unique_lock lock(f.histogram->mutex_);
      auto series = f.histogram->series_;
      lock.unlock();
      if (f.labels.empty() && series.empty()) series[{}] = Histogram::Series{};
      for (auto& [labels, s] : series) {
        s.buckets.resize(f.bounds.size(), 0);
        std::uint64_t cumulative = 0;
        for (std::size_t i = 0; i < f.bounds.size(); ++i) {
          cumulative += s.buckets[i];
          const std::string le = format_value(f.bounds[i]);
          out +=
              f.name + "_bucket" + label_set(f.labels, labels, &le) + " " + std::to_string(cumulative) + "\n";
        }
        const std::string inf = "+Inf";
        out += f.name + "_bucket" + label_set(f.labels, labels, &inf) + " " + std::to_string(s.count) + "\n";
        out += f.name + "_sum" + label_set(f.labels, labels, nullptr) + " " + format_value(s.sum) + "\n";
        out +=
            f.name + "_count" + label_set(f.labels, labels, nullptr) + " " + std::to_string(s.count) + "\n";
      }
    }
  }
  return out;
}

}  // namespace hypertopo::telemetry
