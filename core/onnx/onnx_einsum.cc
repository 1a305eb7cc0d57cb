// ONNX Einsum as ATen ops: each operand's repeated labels become diagonals,
// its dims are permuted into one common label order (the output's labels,
// then the summed ones) with size-1 dims for labels it lacks, the operands
// are multiplied with broadcasting, and the summed labels are reduced.
// Exact (one product per term, summed as aten.sum sums), not fast: the
// broadcast product is bounded.

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/onnx/onnx_op_table.h"
#include "core/onnx/onnx_op_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

// The largest broadcast product the mapping makes.
constexpr int64_t kMaxEinsumElements = int64_t{1} << 24;
// Labels: letters are their char; ellipsis dims count from 1000.
constexpr int kEllipsisLabel = 1000;

struct Term {
  std::vector<int> labels;  // letters, with kEllipsis where "..." is
  bool has_ellipsis = false;
};
constexpr int kEllipsis = -1;

absl::StatusOr<Term> ParseTerm(absl::string_view text) {
  Term term;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (term.has_ellipsis || text.substr(i, 3) != "...") {
        return absl::InvalidArgumentError(
            absl::StrCat("malformed term '", text, "'"));
      }
      term.has_ellipsis = true;
      term.labels.push_back(kEllipsis);
      i += 2;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(c))) {
      return absl::InvalidArgumentError(
          absl::StrCat("malformed term '", text, "'"));
    }
    term.labels.push_back(c);
  }
  return term;
}

// The term's labels with its ellipsis expanded to `n` dims, aligned right
// among `width` ellipsis dims (numpy's broadcasting of ellipses).
std::vector<int> Expand(const Term& term, int n, int width) {
  std::vector<int> out;
  for (int l : term.labels) {
    if (l != kEllipsis) {
      out.push_back(l);
      continue;
    }
    for (int k = width - n; k < width; ++k) out.push_back(kEllipsisLabel + k);
  }
  return out;
}

absl::Status MapEinsum(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(std::string equation, ctx.attrs().String("equation", ""));
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<std::string> term_texts = absl::StrSplit(lhs, ',');
  if (static_cast<int>(term_texts.size()) != ctx.num_inputs()) {
    return absl::InvalidArgumentError(
        absl::StrCat("equation '", equation, "' has ", term_texts.size(),
                     " terms for ", ctx.num_inputs(), " inputs"));
  }
  std::vector<Arg> operands;
  std::vector<std::vector<int>> labels;
  std::vector<Shape> shapes;
  std::vector<Term> terms;
  int width = 0;  // ellipsis dims of the widest operand
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    ASSIGN_OR_RETURN(Term term, ParseTerm(term_texts[i]));
    ASSIGN_OR_RETURN(Shape shape, ctx.StaticShape(i));
    const int letters =
        static_cast<int>(term.labels.size()) - (term.has_ellipsis ? 1 : 0);
    const int n = static_cast<int>(shape.size()) - letters;
    if (n < 0 || (!term.has_ellipsis && n != 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("term '", term_texts[i], "' for input ", i, " of rank ",
                       shape.size()));
    }
    width = std::max(width, n);
    terms.push_back(term);
    shapes.push_back(shape);
    ASSIGN_OR_RETURN(Arg x, ctx.Input(i));
    operands.push_back(x);
  }
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const int letters = static_cast<int>(terms[i].labels.size()) -
                        (terms[i].has_ellipsis ? 1 : 0);
    labels.push_back(
        Expand(terms[i], static_cast<int>(shapes[i].size()) - letters, width));
  }
  // The output's labels: as written, or numpy's implicit form (the
  // ellipsis, then the letters that occur once, in alphabetical order).
  std::vector<int> out_labels;
  if (arrow != std::string::npos) {
    ASSIGN_OR_RETURN(Term out, ParseTerm(equation.substr(arrow + 2)));
    out_labels = Expand(out, width, width);
  } else {
    for (int k = 0; k < width; ++k) out_labels.push_back(kEllipsisLabel + k);
    std::vector<int> letters;
    for (const auto& ls : labels) {
      for (int l : ls) {
        if (l < kEllipsisLabel) letters.push_back(l);
      }
    }
    std::sort(letters.begin(), letters.end());
    for (size_t k = 0; k < letters.size(); ++k) {
      const bool once =
          (k == 0 || letters[k - 1] != letters[k]) &&
          (k + 1 == letters.size() || letters[k + 1] != letters[k]);
      if (once) out_labels.push_back(letters[k]);
    }
  }
  // Each label's size (1 broadcasts), checked across operands.
  std::vector<std::pair<int, int64_t>> sizes;
  auto size_of = [&](int label) -> int64_t* {
    for (auto& [l, s] : sizes) {
      if (l == label) return &s;
    }
    return nullptr;
  };
  for (size_t i = 0; i < labels.size(); ++i) {
    for (size_t d = 0; d < labels[i].size(); ++d) {
      const int64_t s = shapes[i][d];
      int64_t* have = size_of(labels[i][d]);
      if (have == nullptr) {
        sizes.emplace_back(labels[i][d], s);
      } else if (*have != s) {
        if (*have == 1 && labels[i][d] >= kEllipsisLabel) {
          *have = s;
        } else if (!(s == 1 && labels[i][d] >= kEllipsisLabel)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "a label has sizes ", *have, " and ", s, " in '", equation, "'"));
        }
      }
    }
  }
  for (int l : out_labels) {
    if (size_of(l) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("an output label of '", equation, "' is in no input"));
    }
  }
  // The common order: output labels, then the summed ones.
  std::vector<int> order = out_labels;
  for (const auto& [l, s] : sizes) {
    if (std::find(order.begin(), order.end(), l) == order.end()) {
      order.push_back(l);
    }
  }
  int64_t product = 1;
  for (int l : order) product *= std::max<int64_t>(*size_of(l), 1);
  if (product > kMaxEinsumElements) {
    return absl::UnimplementedError(absl::StrCat(
        "an einsum whose broadcast product has ", product, " elements"));
  }
  Arg result;
  for (size_t i = 0; i < operands.size(); ++i) {
    Arg x = operands[i];
    std::vector<int> ls = labels[i];
    // Repeated labels: the diagonal (appended last by aten.diagonal).
    for (bool again = true; again;) {
      again = false;
      for (size_t a = 0; a < ls.size() && !again; ++a) {
        for (size_t b = a + 1; b < ls.size() && !again; ++b) {
          if (ls[a] != ls[b]) continue;
          ASSIGN_OR_RETURN(
              x, ctx.Emit("aten.diagonal.default",
                          {x, Arg::Int(0), Arg::Int(a), Arg::Int(b)}));
          const int label = ls[a];
          ls.erase(ls.begin() + b);
          ls.erase(ls.begin() + a);
          ls.push_back(label);
          again = true;
        }
      }
    }
    // Permute into `order`, then view with size-1 dims for missing labels.
    std::vector<int64_t> perm;
    for (int l : order) {
      auto it = std::find(ls.begin(), ls.end(), l);
      if (it != ls.end()) perm.push_back(it - ls.begin());
    }
    ASSIGN_OR_RETURN(x, ctx.Emit("aten.permute.default", {x, IntList(perm)}));
    ASSIGN_OR_RETURN(Shape permuted, ctx.StaticShapeOf(x));
    std::vector<int64_t> view;
    size_t next = 0;
    for (int l : order) {
      if (std::find(ls.begin(), ls.end(), l) == ls.end()) {
        view.push_back(1);
      } else {
        view.push_back(permuted[next++]);
      }
    }
    ASSIGN_OR_RETURN(x, ReshapeTo(ctx, x, view));
    if (i == 0) {
      result = x;
    } else {
      ASSIGN_OR_RETURN(result, ctx.Emit("aten.mul.Tensor", {result, x}));
    }
  }
  const DType dtype = ctx.Meta(operands[0]).dtype;
  if (order.size() > out_labels.size()) {
    std::vector<int64_t> summed;
    for (size_t d = out_labels.size(); d < order.size(); ++d) {
      summed.push_back(static_cast<int64_t>(d));
    }
    ASSIGN_OR_RETURN(result,
                     ctx.Emit("aten.sum.dim_IntList",
                              {result, IntList(summed), Arg::Bool(false)}));
  }
  // A size-1 broadcast label of the output takes its full size.
  std::vector<int64_t> out_shape;
  for (int l : out_labels) out_shape.push_back(*size_of(l));
  ASSIGN_OR_RETURN(Shape have, ctx.StaticShapeOf(result));
  if (!std::equal(have.begin(), have.end(), out_shape.begin(),
                  out_shape.end())) {
    ASSIGN_OR_RETURN(
        result, ctx.Emit("aten.expand.default", {result, IntList(out_shape)}));
    ASSIGN_OR_RETURN(result, ctx.Emit("aten.clone.default", {result}));
  }
  ASSIGN_OR_RETURN(result, CastTo(ctx, result, dtype));
  return ctx.SetOutput(0, result);
}

}  // namespace

void AddEinsumOnnxOps(OnnxOpTable& table) { table.Add("Einsum", MapEinsum); }

}  // namespace guardjit
