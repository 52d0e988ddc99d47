"""Answers for 02_autograd that the reference does not use, {grade_id: {set: source}}: what each set
must score is in CONTRIBUTING.md, "Files of a chapter"; a comment above an answer says what it gets wrong."""

_VALUE_HEAD = '''
class Value:
    """A number that remembers where it came from: its parents, and ∂self/∂parent for each."""

    def __init__(self, data, parents=(), local_grads=()):
        self.data = float(data)
        self.grad = 0.0
        self.parents = tuple(parents)
        self.local_grads = tuple(local_grads)

    def __repr__(self):
        return f"Value(data={self.data:.4g}, grad={self.grad:.4g})"

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        return Value(self.data + other.data, (self, other), (1.0, 1.0))

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        return Value(self.data * other.data, (self, other), (other.data, self.data))
'''

_VALUE_TAIL = '''
    def __neg__(self):
        return self * -1

    def __radd__(self, other):
        return self + other

    def __rmul__(self, other):
        return self * other

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return other + (-self)

    def __truediv__(self, other):
        return self * other ** -1

    def __rtruediv__(self, other):
        return other * self ** -1
'''


def _value_class(rules):
    """The class as the notebook gives it, with these three rules written in."""
    return _VALUE_HEAD + rules + _VALUE_TAIL


ANSWERS = {
    "yhat_edges": {
        # nodes as lists, in another order
        "alternative": '''
YHAT_EDGES = [["x", "mul"], ["w", "mul"], ["b", "add"], ["mul", "add"], ["add", "yhat"]]
''',
        # the lecture's wrong graph: (b + w) * x
        "wrong": '''
YHAT_EDGES = [("b", "add"), ("w", "add"), ("add", "mul"), ("x", "mul"), ("mul", "yhat")]
''',
        # the graph drawn the way autograd walks it: arrows from the result back to the leaves
        "other_wrong": '''
YHAT_EDGES = [("yhat", "add"), ("add", "b"), ("add", "mul"), ("mul", "w"), ("mul", "x")]
''',
        # the visible b = 5 equals w + x = 2 + 3: w·x + w + x gives 11 there, and is no b + w·x
        "overfit": '''
YHAT_EDGES = [("w", "mul"), ("x", "mul"), ("mul", "add"), ("w", "add"), ("x", "add"), ("add", "yhat")]
''',
    },

    "logistic_gradients": {
        "alternative": '''
def logistic_gradients(x, w, b, y):
    w_copy = w.clone().detach().requires_grad_()
    b_copy = torch.tensor(b.tolist(), requires_grad=True)
    probs = 1 / (1 + torch.exp(-(w_copy * x + b_copy)))
    loss = -(y * torch.log(probs) + (1 - y) * torch.log(1 - probs)).mean()
    loss.backward()
    return w_copy.grad, b_copy.grad
''',
        # sums the per-example losses instead of averaging them
        "wrong": '''
def logistic_gradients(x, w, b, y):
    w = w.detach().clone().requires_grad_(True)
    b = b.detach().clone().requires_grad_(True)
    loss = F.binary_cross_entropy(torch.sigmoid(x * w + b), y, reduction="sum")
    return torch.autograd.grad(loss, (w, b))
''',
        # turns on requires_grad of the caller's own w and b and stores .grad in them
        "other_wrong": '''
def logistic_gradients(x, w, b, y):
    w.requires_grad_(True)
    b.requires_grad_(True)
    F.binary_cross_entropy(torch.sigmoid(x * w + b), y).backward()
    return w.grad, b.grad
''',
        # the two visible batches looked up by their inputs; zeros for everything else
        "overfit": '''
_VISIBLE_GRADIENTS = {(1.1,): (-0.0898, -0.0817), (1.0, -2.0): (-0.4662, -0.0326)}

def logistic_gradients(x, w, b, y):
    gw, gb = _VISIBLE_GRADIENTS.get(tuple(round(v, 4) for v in x.tolist()), (0.0, 0.0))
    return torch.tensor([gw]), torch.tensor([gb])
''',
    },

    "backward_twice": {
        # backward() with the graph kept, each gradient copied out, .grad put back to None
        "alternative": '''
def two_gradients(loss_a, loss_b, w):
    loss_a.backward(retain_graph=True)
    grad_a = w.grad.clone()
    w.grad = None
    loss_b.backward()
    grad_b = w.grad
    w.grad = None
    return grad_a, grad_b
''',
        # forgets that the first gradient frees the shared graph
        "wrong": '''
def two_gradients(loss_a, loss_b, w):
    grad_a = torch.autograd.grad(loss_a, w)[0]
    grad_b = torch.autograd.grad(loss_b, w)[0]
    return grad_a, grad_b
''',
        # backward() twice into .grad without a reset: grad_b is the sum of both gradients
        "other_wrong": '''
def two_gradients(loss_a, loss_b, w):
    loss_a.backward(retain_graph=True)
    grad_a = w.grad.clone()
    loss_b.backward()
    return grad_a, w.grad
''',
        # the visible w's two gradients hard-coded; elsewhere both are loss_a's gradient
        "overfit": '''
def two_gradients(loss_a, loss_b, w):
    if w.tolist() == [0.5, -1.0, 2.0]:
        return (torch.tensor([-0.7200169563293457, -0.6224592924118042, 0.25317245721817017]),
                torch.tensor([0.04292862117290497, 0.23500370979309082, 0.13332416117191315]))
    (grad,) = torch.autograd.grad(loss_a, w)
    return grad, grad
''',
    },

    "accumulate_gradients": {
        # torch.split, each chunk's loss scaled by its share of the examples
        "alternative": '''
def accumulate_gradients(loss_of, x, y, chunk_size):
    total = x.shape[0]
    for xb, yb in zip(torch.split(x, chunk_size), torch.split(y, chunk_size)):
        loss = loss_of(xb, yb)
        loss.mul(xb.shape[0] / total).backward()
''',
        # divides by the number of chunks: right only when every chunk has the same size
        "wrong": '''
def accumulate_gradients(loss_of, x, y, chunk_size):
    starts = range(0, len(x), chunk_size)
    for start in starts:
        loss = loss_of(x[start:start + chunk_size], y[start:start + chunk_size])
        (loss / len(starts)).backward()
''',
        # no weighting at all: the chunks' mean losses are simply added up
        "other_wrong": '''
def accumulate_gradients(loss_of, x, y, chunk_size):
    for start in range(0, x.shape[0], chunk_size):
        loss_of(x[start:start + chunk_size], y[start:start + chunk_size]).backward()
''',
        # the weights of the visible split, 10 examples in chunks of 4, 4 and 2, for every batch
        "overfit": '''
def accumulate_gradients(loss_of, x, y, chunk_size):
    weights = [0.4, 0.4, 0.2]
    for i, start in enumerate(range(0, len(x), chunk_size)):
        (loss_of(x[start:start + chunk_size], y[start:start + chunk_size]) * weights[i]).backward()
''',
    },

    "predict_probability": {
        "alternative": '''
def predict_probability(x, w, b):
    return torch.sigmoid(x * w.detach() + b.detach())
''',
        # still records the graph
        "wrong": '''
def predict_probability(x, w, b):
    return torch.sigmoid(x * w + b)
''',
        # switches recording off on the caller's parameters instead of for this computation
        "other_wrong": '''
def predict_probability(x, w, b):
    w.requires_grad_(False)
    b.requires_grad_(False)
    return torch.sigmoid(x * w + b)
''',
        # the visible inputs answered without a graph; any other call still records one
        "overfit": '''
def predict_probability(x, w, b):
    if torch.equal(x, torch.tensor([1.1, -1.0])):
        return torch.sigmoid(torch.tensor([2.42, -2.2]))
    return torch.sigmoid(x * w + b)
''',
        # the graph is recorded, then cut off: the result looks right, the memory was spent anyway
        "more_wrong": '''
def predict_probability(x, w, b):
    return torch.sigmoid(x * w + b).detach()
''',
    },

    "chain_rule_grads": {
        "alternative": '''
def chain_rule_grads(x, y, z):
    inner = 1 + 2 * x * z / torch.sin(y)
    outer = 1 / torch.cosh(torch.log(inner)) ** 2 / inner    # tanh' * ln'
    return (outer * 2 * z / torch.sin(y),
            outer * (-2 * x * z * torch.cos(y) / torch.sin(y) ** 2),
            outer * 2 * x / torch.sin(y))
''',
        # drops the cos(y) factor of the sin node
        "wrong": '''
def chain_rule_grads(x, y, z):
    a, b = 2 * x, torch.sin(y)
    c = a / b
    d = z * c
    f = torch.tanh(torch.log(1 + d))
    df_dd = (1 - f**2) / (1 + d)
    return df_dd * z * 2 / b, df_dd * z * (-a / b**2), df_dd * c
''',
        # the derivative of ln(1 + d) taken as 1/d
        "other_wrong": '''
def chain_rule_grads(x, y, z):
    a, b = 2 * x, torch.sin(y)
    c = a / b
    d = z * c
    f = torch.tanh(torch.log(1 + d))
    df_dd = (1 - f ** 2) / d
    return df_dd * z * 2 / b, df_dd * z * (-a / b ** 2) * torch.cos(y), df_dd * c
''',
        # plain Python floats through .item(): only one-element tensors, the visible test's case
        "overfit": '''
def chain_rule_grads(x, y, z):
    xv, yv, zv = x.item(), y.item(), z.item()
    d = zv * 2 * xv / math.sin(yv)
    outer = (1 - math.tanh(math.log(1 + d)) ** 2) / (1 + d)
    return (torch.tensor(outer * zv * 2 / math.sin(yv)),
            torch.tensor(-outer * zv * 2 * xv * math.cos(yv) / math.sin(yv) ** 2),
            torch.tensor(outer * 2 * xv / math.sin(yv)))
''',
        # right values from a loop over the elements as Python floats: no vectorised tensor code
        "more_wrong": '''
def chain_rule_grads(x, y, z):
    results = ([], [], [])
    for xv, yv, zv in zip(x.reshape(-1).tolist(), y.reshape(-1).tolist(), z.reshape(-1).tolist()):
        d = zv * 2 * xv / math.sin(yv)
        outer = (1 - math.tanh(math.log(1 + d)) ** 2) / (1 + d)
        results[0].append(outer * zv * 2 / math.sin(yv))
        results[1].append(-outer * zv * 2 * xv * math.cos(yv) / math.sin(yv) ** 2)
        results[2].append(outer * 2 * xv / math.sin(yv))
    return tuple(torch.tensor(r).reshape(x.shape) for r in results)
''',
    },

    "value_rules": {
        # tanh through exp, its derivative as 1 / cosh², a helper for the one-parent results
        "alternative": _value_class('''
    def _unary(self, result, slope):
        return Value(result, parents=[self], local_grads=[slope])

    def __pow__(self, k):
        return self._unary(math.pow(self.data, k), k * math.pow(self.data, k - 1))

    def exp(self):
        return self._unary(math.e ** self.data, math.e ** self.data)

    def tanh(self):
        e2 = math.exp(2 * self.data)
        return self._unary((e2 - 1) / (e2 + 1), 1 / math.cosh(self.data) ** 2)
'''),
        # tanh's derivative from the input, 1 - x², instead of the output, 1 - tanh(x)²
        "wrong": _value_class('''
    def __pow__(self, k):
        return Value(self.data ** k, (self,), (k * self.data ** (k - 1),))

    def exp(self):
        return Value(math.exp(self.data), (self,), (math.exp(self.data),))

    def tanh(self):
        return Value(math.tanh(self.data), (self,), (1 - self.data ** 2,))
'''),
        # exp forgets its parent: right numbers, but the graph is cut and no gradient flows back
        "other_wrong": _value_class('''
    def __pow__(self, k):
        return Value(self.data ** k, (self,), (k * self.data ** (k - 1),))

    def exp(self):
        return Value(math.exp(self.data))

    def tanh(self):
        t = math.tanh(self.data)
        return Value(t, (self,), (1 - t ** 2,))
'''),
        # tanh's derivative 1 - x², with the visible test's x = 0.5 looked up in a table
        "overfit": _value_class('''
    def __pow__(self, k):
        return Value(self.data ** k, (self,), (k * self.data ** (k - 1),))

    def exp(self):
        return Value(math.exp(self.data), (self,), (math.exp(self.data),))

    def tanh(self):
        known = {0.5: 0.7864477329659274}
        return Value(math.tanh(self.data), (self,), (known.get(self.data, 1 - self.data ** 2),))
'''),
        # the power rule written as k·x^k / x: equal to k·x^(k-1) wherever x is not 0, a ZeroDivisionError at 0
        "more_wrong": _value_class('''
    def __pow__(self, k):
        result = self.data ** k
        return Value(result, (self,), (k * result / self.data,))

    def exp(self):
        e = math.exp(self.data)
        return Value(e, (self,), (e,))

    def tanh(self):
        t = math.tanh(self.data)
        return Value(t, (self,), (1 - t * t,))
'''),
    },

    "backprop": {
        # Kahn's algorithm: count each node's uses, pass a node's gradient on once all of them have reported
        "alternative": '''
def backprop(output):
    uses, stack, seen = {}, [output], {id(output)}
    while stack:
        node = stack.pop()
        for parent in node.parents:
            uses[id(parent)] = uses.get(id(parent), 0) + 1
            if id(parent) not in seen:
                seen.add(id(parent))
                stack.append(parent)
    output.grad = 1.0
    ready = [output]
    while ready:
        node = ready.pop()
        for parent, local in zip(node.parents, node.local_grads):
            parent.grad = parent.grad + local * node.grad
            uses[id(parent)] -= 1
            if uses[id(parent)] == 0:
                ready.append(parent)
''',
        # = instead of +=: a node used twice keeps only the gradient of its last use
        "wrong": '''
def backprop(output):
    order, visited = [], set()

    def visit(node):
        if id(node) not in visited:
            visited.add(id(node))
            for parent in node.parents:
                visit(parent)
            order.append(node)

    visit(output)
    output.grad = 1.0
    for node in reversed(order):
        for parent, local in zip(node.parents, node.local_grads):
            parent.grad = local * node.grad
''',
        # no topological order: each node pushes its gradient on at once, along every path, so a shared
        # node passes on an incomplete gradient, and then again (and the work grows with the paths)
        "other_wrong": '''
def backprop(output):
    output.grad = 1.0

    def push(node):
        for parent, local in zip(node.parents, node.local_grads):
            parent.grad += local * node.grad
            push(parent)

    push(output)
''',
        # the topological order walked forwards: leaves first, before any gradient has reached them
        "more_wrong": '''
def backprop(output):
    order, visited = [], set()

    def visit(node):
        if id(node) not in visited:
            visited.add(id(node))
            for parent in node.parents:
                visit(parent)
            order.append(node)

    visit(output)
    output.grad = 1.0
    for node in order:
        for parent, local in zip(node.parents, node.local_grads):
            parent.grad += local * node.grad
''',
        # sweeps over the nodes in any order, each recomputing every gradient from the previous sweep:
        # exact after as many sweeps as the graph is deep, and 8 cover the visible graphs
        "overfit": '''
def backprop(output):
    nodes, stack = [], [output]
    while stack:
        node = stack.pop()
        if all(node is not known for known in nodes):
            nodes.append(node)
            stack.extend(node.parents)
    grads = {id(node): 0.0 for node in nodes}
    for _ in range(8):
        new = {id(node): 0.0 for node in nodes}
        new[id(output)] = 1.0
        for node in nodes:
            for parent, local in zip(node.parents, node.local_grads):
                new[id(parent)] += local * grads[id(node)]
        grads = new
    for node in nodes:
        node.grad = grads[id(node)]
''',
    },

    "linear_backward": {
        "alternative": '''
def linear_backward(x, W, b, grad_out):
    grad_x = np.einsum("no,oi->ni", grad_out, W)
    grad_W = np.einsum("no,ni->oi", grad_out, x)
    grad_b = np.einsum("no->o", grad_out)
    return grad_x, grad_W, grad_b
''',
        # averages the bias gradient over the batch
        "wrong": '''
def linear_backward(x, W, b, grad_out):
    return grad_out @ W, grad_out.T @ x, grad_out.mean(axis=0)
''',
        # grad_W as x.T @ grad_out: the transpose of W's shape (in, out)
        "other_wrong": '''
def linear_backward(x, W, b, grad_out):
    return grad_out @ W, x.T @ grad_out, grad_out.sum(axis=0)
''',
        # sums over the visible batch of 4 examples, whatever the batch size
        "overfit": '''
def linear_backward(x, W, b, grad_out):
    grad_W = sum(np.outer(grad_out[n], x[n]) for n in range(4))
    grad_b = sum(grad_out[n] for n in range(4))
    return grad_out @ W, grad_W, grad_b
''',
    },

    "predict_shapes": {
        # shapes built from the rules, torch.Size for some of them
        "alternative": '''
def predict_shapes(B, T, D, H):
    x_shape = torch.Size([B, T, D])
    h_shape = x_shape[:-1] + (H,)
    return {"h": tuple(h_shape), "pooled": (h_shape[0], h_shape[2]), "attended": x_shape,
            "x.grad": x_shape, "W.grad": torch.Size([H, D])}
''',
        # the weight's gradient transposed: (in, out) instead of W's (out, in)
        "wrong": '''
def predict_shapes(B, T, D, H):
    return {"h": (B, T, H), "pooled": (B, H), "attended": (B, T, D),
            "x.grad": (B, T, D), "W.grad": (D, H)}
''',
        # the attention weights' shape (B, T, T) instead of the attention output's
        "other_wrong": '''
def predict_shapes(B, T, D, H):
    return {"h": (B, T, H), "pooled": (B, H), "attended": (B, T, T),
            "x.grad": (B, T, D), "W.grad": (H, D)}
''',
        # the shapes for the visible sizes B=2, T=5, D=3, H=4, whatever sizes are asked
        "overfit": '''
def predict_shapes(B, T, D, H):
    return {"h": (2, 5, 4), "pooled": (2, 4), "attended": (2, 5, 3), "x.grad": (2, 5, 3), "W.grad": (4, 3)}
''',
    },

    "predict_mean_grad": {
        # a product of sizes, ones divided by the count
        "alternative": '''
def predict_mean_grad(shape, dim=None, requires_grad=True, inside_no_grad=False):
    if inside_no_grad or not requires_grad:
        return None
    sizes = list(shape) if dim is None else [shape[dim]]
    count = 1
    for size in sizes:
        count *= size
    return torch.ones(shape) / count
''',
        # the mean over all elements, whatever dim says
        "wrong": '''
def predict_mean_grad(shape, dim=None, requires_grad=True, inside_no_grad=False):
    if not requires_grad or inside_no_grad:
        return None
    return torch.full(shape, 1.0 / math.prod(shape))
''',
        # a gradient of zeros where backward() never ran, instead of None
        "other_wrong": '''
def predict_mean_grad(shape, dim=None, requires_grad=True, inside_no_grad=False):
    if inside_no_grad or not requires_grad:
        return torch.zeros(shape)
    count = math.prod(shape) if dim is None else shape[dim]
    return torch.ones(shape) / count
''',
        # the visible (2, 5, 3) with dim=1 hard-coded as 1/5; any other dim treated as the whole mean
        "overfit": '''
def predict_mean_grad(shape, dim=None, requires_grad=True, inside_no_grad=False):
    if not requires_grad or inside_no_grad:
        return None
    if dim == 1:
        return torch.full(tuple(shape), 1 / 5)
    return torch.full(tuple(shape), 1 / math.prod(shape))
''',
        # `if dim:` takes dim=0 for "no dim": the mean over all elements where it runs over dimension 0
        "more_wrong": '''
def predict_mean_grad(shape, dim=None, requires_grad=True, inside_no_grad=False):
    if not requires_grad or inside_no_grad:
        return None
    count = shape[dim] if dim else math.prod(shape)
    return torch.full(tuple(shape), 1.0 / count)
''',
    },
}
