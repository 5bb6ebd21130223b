from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 12


@test_case(
    points=1, hidden=False,
    failure_message=(
        'Attention(q, k, v, causal=True) should give weights that are zero above the diagonal and whose rows '
        'add up to one.'))
def test_causal_attention_basic(Attention):
    import torch
    from course.handles import student, close
    Attention = student(Attention)
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 5, 8)
    out, w = Attention(q, k, v, causal=True)
    assert type(out) is torch.Tensor and type(w) is torch.Tensor and tuple(out.shape) == (5, 8) and tuple(w.shape) == (5, 5), "Attention(q, k, v, causal=True) should return out (5, 8) and weights (5, 5)"
    assert not torch.isnan(w).any(), "your causal weights contain NaN: is the diagonal (j = i) still allowed?"
    assert close(w.sum(-1), torch.ones(5)), "the rows of your causal weights should still add up to one"
    assert (w.triu(1) == 0).all(), "with causal=True the weights above the diagonal (j > i) should be exactly zero"
    q2, k2 = torch.randn(2, 5, 8)
    for other in (Attention(q2, k, v, causal=True), Attention(q, k2, v, causal=True)):
        w2 = other[1] if type(other) in (tuple, list) and len(other) == 2 else None
        assert type(w2) is torch.Tensor and tuple(w2.shape) == (5, 5) and not close(w2, w, atol=1e-4), "your causal weights should depend on q and k (the Boltzmann weights of q_i . k_j over j <= i), not be the same whatever they are"


@test_case(
    points=2, hidden=True,
    failure_message=(
        'Your Attention with causal=True should set the energies with j > i to infinity (the dot products to '
        '-inf) before the softmax, keep the diagonal, and still divide by sqrt(d), for one sentence and for a'
        ' batch; with causal=False (the default) nothing changes.'))
def test_causal_attention_values(Attention):
    import math
    import torch
    from course.handles import student, close
    Attention = student(Attention)
    torch.manual_seed(1)
    for shape in [(6, 4), (2, 7, 8), (2, 3, 5, 6), (1, 3)]:
        q, k, v = (torch.randn(*shape) for _ in range(3))
        q = 3 * q
        L, d = shape[-2], shape[-1]
        dots = q @ k.transpose(-2, -1) / math.sqrt(d)
        plain = torch.softmax(dots, dim=-1)
        future = torch.ones(L, L, dtype=torch.bool).triu(1)
        masked = torch.softmax(dots.masked_fill(future, -math.inf), dim=-1)
        for causal, want_w in [(False, plain), (True, masked)]:
            out, w = Attention(q, k, v, causal=causal)
            assert type(w) is torch.Tensor and tuple(w.shape) == tuple(want_w.shape), f"weights of shape {tuple(getattr(w, 'shape', ()))} for inputs of shape {shape}"
            assert not torch.isnan(w).any() and not torch.isnan(out).any(), f"with causal={causal} your Attention gives NaN"
            assert close(w, want_w), f"with causal={causal} your weights are not the Boltzmann weights exp(q_i . k_j / sqrt(d)) over the allowed j (all j, or j <= i when causal)"
            assert close(out, want_w @ v), f"with causal={causal} your output is not weights @ v"
        out, w = Attention(q, k, v)
        assert close(w, plain), "Attention(q, k, v) without causal should work exactly as before (causal=False by default)"


@test_case(
    points=1, hidden=True,
    failure_message=(
        'With causal=True the output at site i must not depend at all on q, k, v at sites after i: its '
        'derivative with respect to them must be exactly zero, not just tiny. Put the infinite energies in '
        'before the softmax: if you take the softmax of all the sites and then zero the future and '
        'renormalise (or subtract a maximum taken over all the sites), the weights look right but rounding '
        'leaks a tiny gradient (about 1e-7 to 1e-5) to the future.'))
def test_causal_gradient(Attention, Head):
    import torch
    from course.handles import student, close, StudentError
    Attention, Head = student(Attention), student(Head)

    def attention_works():
        """Your Attention computes (without the switch): the same q, k, v give the same answer, its
        weights change when q changes and when k changes, and its output changes when v changes."""
        try:
            q, k, v = torch.randn(3, 2, 5, 4)
            out, w = Attention(q, k, v)
            if type(out) is not torch.Tensor or type(w) is not torch.Tensor or tuple(out.shape) != (2, 5, 4) or tuple(w.shape) != (2, 5, 5):
                return False
            again = Attention(q, k, v)
            if not (close(again[0], out, atol=1e-6) and close(again[1], w, atol=1e-6)):
                return False
            for other in ((torch.randn(2, 5, 4), k, v), (q, torch.randn(2, 5, 4), v)):
                w2 = Attention(*other)[1]
                if type(w2) is not torch.Tensor or close(w2, w, atol=1e-4):
                    return False
            out2 = Attention(q, k, torch.randn(2, 5, 4))[0]
            return type(out2) is torch.Tensor and not close(out2, out, atol=1e-4)
        except Exception:
            return False

    def switch_used():
        """The causal switch does work somewhere: your Attention's causal weights differ from the
        plain ones and still change with q and k; or (if your Attention is where it goes wrong) your
        Head with causal=True, run with a correct Attention, gives other outputs than without."""
        import math

        def reference_attention(q, k, v, causal=False):
            dots = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
            if causal:
                L = q.shape[-2]
                dots = dots.masked_fill(torch.ones(L, L, dtype=torch.bool, device=q.device).triu(1), -math.inf)
            probs = torch.softmax(dots, dim=-1)
            return probs @ v, probs
        try:
            q, k, v = torch.randn(3, 2, 5, 4)
            w = Attention(q, k, v, causal=True)[1]
            plain = Attention(q, k, v)[1]
            others = [Attention(torch.randn(2, 5, 4), k, v, causal=True)[1], Attention(q, torch.randn(2, 5, 4), v, causal=True)[1]]
            if type(w) is torch.Tensor and tuple(w.shape) == (2, 5, 5) and not close(w, plain, atol=1e-4) \
                    and all(type(o) is torch.Tensor and tuple(o.shape) == (2, 5, 5) and not close(o, w, atol=1e-4) for o in others):
                return True
        except Exception:
            pass
        try:
            on, off = Head(8, 4, causal=True), Head(8, 4)
            values = {name: torch.randn(t.shape) for name, t in on.params(values=False).items()}
            on.set_params(values)
            off.set_params(values)
            x = torch.randn(2, 5, 8)
            with on.swapped(Attention=reference_attention):
                a, b = on(x), off(x)
            return type(a) is torch.Tensor and type(b) is torch.Tensor and tuple(a.shape) == (2, 5, 4) and not close(a, b, atol=1e-5)
        except Exception:
            return False

    torch.manual_seed(6)
    assert attention_works(), "your Attention does not compute yet (its weights should change with q and k, its output with v), so its derivatives cannot count"
    assert switch_used(), "causal=True changes nothing yet (not in your Attention, nor in your Head): there is no causal attention whose derivatives could count"
    for B, L, d in [(2, 6, 5), (1, 9, 4)]:
        q, k, v = torch.randn(3, B, L, d)
        q = 3 * q
        try:
            out, w = Attention(q, k, v, causal=True)
        except (StudentError, TypeError, ValueError):
            continue        # it does not run here: the values tests say so
        if type(w) is not torch.Tensor or tuple(w.shape) != (B, L, L) or not (w.triu(1) == 0).all():
            continue        # the weights themselves are not causal yet: the values tests say so
        for i in range(L - 1):
            r = torch.zeros(B, L, d)
            r[:, i] = torch.randn(B, d)                # the derivative of output i only
            _, grads, _ = Attention.vjp(q, k, v, causal=True, cotangent=(r, None))
            assert all(type(g) is torch.Tensor for g in grads), "no gradient reached q, k or v: don't detach anything inside Attention"
            for name, g in zip("qkv", grads):
                assert (g[:, i + 1:] == 0).all(), f"the output at site {i} has a nonzero derivative (up to {g[:, i + 1:].abs().max().item():.1e}) with respect to {name} at later sites: your attention is not exactly causal"
            assert grads[2][:, :i + 1].abs().max() > 0, f"the output at site {i} should depend on v at sites 0 to {i}"
            if i > 0:
                assert grads[0][:, i].abs().max() > 0 and grads[1][:, :i + 1].abs().max() > 0, f"the output at site {i} should depend on q at site {i} and on k at sites 0 to {i}"


@test_case(
    points=0.5, hidden=True,
    failure_message=(
        'Make the mask on the same device as q (torch.ones(L, L, dtype=torch.bool, device=q.device)): on a '
        'GPU a mask made on the CPU breaks your causal Attention.'))
def test_causal_attention_device(Attention, Head):
    import torch
    from course.handles import student, watching, close
    Attention, Head = student(Attention), student(Head)

    def attention_works():
        """Your Attention computes (without the switch): the same q, k, v give the same answer, its
        weights change when q changes and when k changes, and its output changes when v changes."""
        try:
            q, k, v = torch.randn(3, 2, 5, 4)
            out, w = Attention(q, k, v)
            if type(out) is not torch.Tensor or type(w) is not torch.Tensor or tuple(out.shape) != (2, 5, 4) or tuple(w.shape) != (2, 5, 5):
                return False
            again = Attention(q, k, v)
            if not (close(again[0], out, atol=1e-6) and close(again[1], w, atol=1e-6)):
                return False
            for other in ((torch.randn(2, 5, 4), k, v), (q, torch.randn(2, 5, 4), v)):
                w2 = Attention(*other)[1]
                if type(w2) is not torch.Tensor or close(w2, w, atol=1e-4):
                    return False
            out2 = Attention(q, k, torch.randn(2, 5, 4))[0]
            return type(out2) is torch.Tensor and not close(out2, out, atol=1e-4)
        except Exception:
            return False

    def switch_used():
        """The causal switch does work somewhere: your Attention's causal weights differ from the
        plain ones and still change with q and k; or (if your Attention is where it goes wrong) your
        Head with causal=True, run with a correct Attention, gives other outputs than without."""
        import math

        def reference_attention(q, k, v, causal=False):
            dots = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
            if causal:
                L = q.shape[-2]
                dots = dots.masked_fill(torch.ones(L, L, dtype=torch.bool, device=q.device).triu(1), -math.inf)
            probs = torch.softmax(dots, dim=-1)
            return probs @ v, probs
        try:
            q, k, v = torch.randn(3, 2, 5, 4)
            w = Attention(q, k, v, causal=True)[1]
            plain = Attention(q, k, v)[1]
            others = [Attention(torch.randn(2, 5, 4), k, v, causal=True)[1], Attention(q, torch.randn(2, 5, 4), v, causal=True)[1]]
            if type(w) is torch.Tensor and tuple(w.shape) == (2, 5, 5) and not close(w, plain, atol=1e-4) \
                    and all(type(o) is torch.Tensor and tuple(o.shape) == (2, 5, 5) and not close(o, w, atol=1e-4) for o in others):
                return True
        except Exception:
            pass
        try:
            on, off = Head(8, 4, causal=True), Head(8, 4)
            values = {name: torch.randn(t.shape) for name, t in on.params(values=False).items()}
            on.set_params(values)
            off.set_params(values)
            x = torch.randn(2, 5, 8)
            with on.swapped(Attention=reference_attention):
                a, b = on(x), off(x)
            return type(a) is torch.Tensor and type(b) is torch.Tensor and tuple(a.shape) == (2, 5, 4) and not close(a, b, atol=1e-5)
        except Exception:
            return False

    torch.manual_seed(8)
    assert attention_works(), "your Attention does not compute yet (its weights should change with q and k, its output with v), so its device cannot be checked"
    assert switch_used(), "causal=True changes nothing yet (not in your Attention, nor in your Head), so the causal mask's device cannot be checked"
    q, k, v = (torch.empty(2, 5, 8, device="meta") for _ in range(3))    # another device ("meta": shapes only)
    with watching() as seen:
        got = Attention.describe(q, k, v, causal=True)     # shapes and devices only
    assert not seen.mixed_devices, "with q, k and v on another device your causal Attention makes a tensor on the CPU: make the mask with device=q.device"
    shapes = [d.get("shape") for d in got] if type(got) is list and len(got) == 2 else None
    assert shapes == [[2, 5, 8], [2, 5, 5]], "your causal Attention gives the wrong shapes on another device"


@test_case(
    points=1.5, hidden=True,
    failure_message=(
        'Head(dim, head_dim, causal=True) should be causal: save causal as self.causal in __init__ and pass '
        'it on to Attention in forward (Attention(self.Q(x), self.K(x), self.V(x), causal=self.causal)); '
        'without it (the default) nothing changes, and self.weights keeps the weights, detached. (This is '
        'checked with a correct Attention in place of yours, so a mistake in your Attention does not count '
        'here.)'))
def test_causal_head(Head):
    import math
    import torch
    from course.handles import student, close, StudentError
    Head = student(Head)

    def reference_attention(q, k, v, causal=False):
        dots = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if causal:
            L = q.shape[-2]
            dots = dots.masked_fill(torch.ones(L, L, dtype=torch.bool, device=q.device).triu(1), -math.inf)
        probs = torch.softmax(dots, dim=-1)
        return probs @ v, probs
    torch.manual_seed(2)
    for causal, dim, head_dim, shape in [(True, 12, 4, (2, 6)), (False, 12, 4, (2, 6)), (None, 8, 8, (3, 5)), (True, 10, 5, (7,))]:
        head = Head(dim, head_dim) if causal is None else Head(dim, head_dim, causal=causal)
        head.set_params({name: 3 * torch.randn(t.shape) / math.sqrt(dim) for name, t in head.params(values=False).items()})
        p = head.params()
        x = torch.randn(*shape, dim)
        q, k, v = x @ p["Q.weight"].T, x @ p["K.weight"].T, x @ p["V.weight"].T
        want_out, want_w = reference_attention(q, k, v, causal=bool(causal))
        with head.swapped(Attention=reference_attention):
            out = head(x)
            w = head.weights.get()
        how = "Head(dim, head_dim)" if causal is None else f"Head(dim, head_dim, causal={causal})"
        assert type(out) is torch.Tensor and tuple(out.shape) == tuple(want_out.shape), f"{how} gives output of shape {tuple(getattr(out, 'shape', ()))}, expected {tuple(want_out.shape)}"
        assert close(out, want_out, atol=1e-5), f"{how} does not give the right output: is causal saved as self.causal and passed to Attention?" if causal else f"{how} should not be causal (causal=False by default)"
        assert close(w, want_w, atol=1e-5), f"{how} does not keep the weights from Attention in self.weights"
    try:                                # with your own Attention: the saved weights are detached
        head(x)
        saved = head.weights.info()
    except StudentError:
        saved = None                    # your Attention does not run: its own tests say so
    assert saved is None or not saved.get("requires_grad"), "the saved weights should be detached: self.weights = weights.detach()"


@test_case(
    points=1.5, hidden=True,
    failure_message=(
        'MultiHead(dim, heads, causal=True) should hand causal on to every one of its heads, so that the '
        'output at site i does not depend on the sites after i; MultiHead(dim, heads) (causal=False by '
        'default) should not be causal. (This is checked with a correct Attention in place of yours; and if '
        'your Head is what goes wrong, MultiHead only has to hand causal on to it.)'))
def test_causal_multihead(MultiHead, Head):
    import math
    import torch
    from course.handles import student, close, given, StudentError
    MultiHead, Head = student(MultiHead), student(Head)

    def reference_attention(q, k, v, causal=False):
        dots = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if causal:
            L = q.shape[-2]
            dots = dots.masked_fill(torch.ones(L, L, dtype=torch.bool, device=q.device).triu(1), -math.inf)
        probs = torch.softmax(dots, dim=-1)
        return probs @ v, probs

    def perturb(piece):
        new = {}
        for name, t in piece.params(values=False).items():
            if t.dim() >= 2:
                new[name] = torch.randn(t.shape) / math.sqrt(t.shape[-1])
            elif name.endswith("weight"):
                new[name] = 1 + 0.5 * torch.randn(t.shape)
            else:
                new[name] = 0.5 * torch.randn(t.shape)
        piece.set_params(new)

    def hears_right(make, causal, dim, L=7):
        """With a correct Attention in place of the notebook's: is the piece that make() builds causal
        when it should be (later sites never change earlier outputs), and not when it should not
        (changing the last site changes every output)?"""
        try:
            piece = make()
            perturb(piece)
            x = torch.randn(2, L, dim)
            with piece.swapped(Attention=reference_attention):
                out = piece(x)
                if type(out) is not torch.Tensor or tuple(out.shape[:2]) != (2, L) or torch.isnan(out).any():
                    return False
                if causal:
                    for s in (1, L // 2, L - 1):
                        y = x.clone()
                        y[:, s:] = torch.randn(2, L - s, dim)
                        later = piece(y)
                        if not close(later[:, :s], out[:, :s], atol=1e-5):
                            return False
                    return True
                y = x.clone()
                y[:, -1] = torch.randn(2, dim)
                later = piece(y)
                return type(later) is torch.Tensor and tuple(later.shape) == tuple(out.shape) and bool(((later - out).abs().amax(-1) > 1e-6).all())
        except Exception:
            return False

    def works(make, dim, groups, L=6):
        """With a correct Attention in place of the notebook's: the piece make() builds computes.
        The same input gives the same output, the output at the last site changes when the input at
        site 0 changes (the sites talk), and each group of its own parameters is used."""
        try:
            piece = make()
            perturb(piece)
            shapes = piece.params(values=False)
            x = torch.randn(2, L, dim)
            with piece.swapped(Attention=reference_attention):
                out = piece(x)
                if type(out) is not torch.Tensor or tuple(out.shape) != (2, L, dim) or not torch.isfinite(out).all():
                    return False
                if not close(piece(x), out, atol=1e-6):
                    return False
                y = x.clone()
                y[:, 0] = torch.randn(2, dim)
                later = piece(y)
                if type(later) is not torch.Tensor or tuple(later.shape) != (2, L, dim) or close(later[:, -1], out[:, -1], atol=1e-6):
                    return False
                for prefix in groups:
                    names = [name for name in shapes if name.startswith(prefix)]
                    if not names:
                        return False
                    piece.set_params({name: torch.randn(shapes[name].shape) for name in names})
                    changed = piece(x)
                    if type(changed) is not torch.Tensor or close(changed, out, atol=1e-6):
                        return False
                    out = changed
            return True
        except Exception:
            return False

    def own_work(outer, inner, make, x, y, groups, sizes):
        """Your piece does its own work whatever the piece inside it does: built with a plain linear
        map (made on your side) in place of each `inner` it makes, the same input gives the same
        output, another input another output, and each group of its own parameters is used."""
        try:
            linear = given("nets.nn").Linear
            spare = [linear(*sizes) for _ in range(6)]

            def stand_in(*args, **kwargs):
                return spare.pop()._ref                # your code gets the linear map itself
            with outer.swapped(**{inner: stand_in}):
                piece = make()
            perturb(piece)
            shapes = piece.params(values=False)
            out = piece(x)
            if type(out) is not torch.Tensor or tuple(out.shape[:2]) != tuple(x.shape[:2]) or not torch.isfinite(out).all():
                return False
            if not close(piece(x), out, atol=1e-6):
                return False
            other = piece(y)
            if type(other) is not torch.Tensor or close(other, out, atol=1e-6):
                return False
            for prefix in groups:
                names = [name for name in shapes if name.startswith(prefix)]
                if not names:
                    return False
                piece.set_params({name: torch.randn(shapes[name].shape) for name in names})
                changed = piece(x)
                if type(changed) is not torch.Tensor or close(changed, out, atol=1e-6):
                    return False
                out = changed
            return True
        except Exception:
            return False

    def handed_on(outer, inner, make):
        """The causal values that building the outer piece (make()) hands to the notebook's `inner`
        (a stand-in records them; building stops there, since the stand-in is not a real piece)."""
        seen = []

        def stand_in(*args, **kwargs):
            seen.append(kwargs["causal"] if "causal" in kwargs else (args[2] if len(args) > 2 else False))
        with outer.swapped(**{inner: stand_in}):
            try:
                make()
            except StudentError:
                pass
        return seen


    torch.manual_seed(3)
    worked = False
    for dim, heads in [(12, 3), (8, 1)]:
        on = hears_right(lambda: MultiHead(dim, heads, causal=True), True, dim)
        off = hears_right(lambda: MultiHead(dim, heads), False, dim)
        if on and off:
            worked = worked or works(lambda: MultiHead(dim, heads, causal=True), dim, ("heads.", "mix."))
            assert worked, f"MultiHead({dim}, {heads}, causal=True) does not compute yet: with a correct Attention, its output should change with its input and use its heads and self.mix"
            continue
        # Not MultiHead's fault if your Head is what does not hear right and MultiHead hands causal on to it.
        head_right = hears_right(lambda: Head(dim, dim // heads, causal=True), True, dim) and hears_right(lambda: Head(dim, dim // heads), False, dim)
        assert not head_right, f"MultiHead({dim}, {heads}, causal=True) should be causal and MultiHead({dim}, {heads}) should not: " + ("changing later sites changed the output at earlier sites; hand causal on to every Head" if not on else "changing the last site should change the output at every site")
        given_on = handed_on(MultiHead, "Head", lambda: MultiHead(dim, heads, causal=True))
        given_off = handed_on(MultiHead, "Head", lambda: MultiHead(dim, heads))
        assert given_on and all(c == True for c in given_on), "MultiHead(dim, heads, causal=True) should make its heads with Head(dim, head_dim, causal)"
        assert given_off and all(c == False for c in given_off), "MultiHead(dim, heads) should make its heads without the causal switch (causal=False)"
        assert own_work(MultiHead, "Head", lambda: MultiHead(dim, heads, causal=True), torch.randn(2, 6, dim), torch.randn(2, 6, dim), ("heads.", "mix."), (dim, dim // heads)), f"MultiHead({dim}, {heads}) does not do its own work: its output should be self.mix of its heads' outputs side by side"


@test_case(
    points=1.5, hidden=True,
    failure_message=(
        'Block(dim, heads, causal=True) should hand causal on to its MultiHead: then the output at site i '
        'cannot depend on sites after i; Block(dim, heads) (causal=False by default) should let every site '
        'hear every other. (This is checked with a correct Attention in place of yours; and if your MultiHead'
        ' or Head is what goes wrong, Block only has to hand causal on to MultiHead.)'))
def test_causal_block(Block, MultiHead):
    import math
    import torch
    from course.handles import student, close, given, StudentError
    Block, MultiHead = student(Block), student(MultiHead)

    def reference_attention(q, k, v, causal=False):
        dots = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if causal:
            L = q.shape[-2]
            dots = dots.masked_fill(torch.ones(L, L, dtype=torch.bool, device=q.device).triu(1), -math.inf)
        probs = torch.softmax(dots, dim=-1)
        return probs @ v, probs

    def perturb(piece):
        new = {}
        for name, t in piece.params(values=False).items():
            if t.dim() >= 2:
                new[name] = torch.randn(t.shape) / math.sqrt(t.shape[-1])
            elif name.endswith("weight"):
                new[name] = 1 + 0.5 * torch.randn(t.shape)
            else:
                new[name] = 0.5 * torch.randn(t.shape)
        piece.set_params(new)

    def hears_right(make, causal, dim, L=7):
        """With a correct Attention in place of the notebook's: is the piece that make() builds causal
        when it should be (later sites never change earlier outputs), and not when it should not
        (changing the last site changes every output)?"""
        try:
            piece = make()
            perturb(piece)
            x = torch.randn(2, L, dim)
            with piece.swapped(Attention=reference_attention):
                out = piece(x)
                if type(out) is not torch.Tensor or tuple(out.shape[:2]) != (2, L) or torch.isnan(out).any():
                    return False
                if causal:
                    for s in (1, L // 2, L - 1):
                        y = x.clone()
                        y[:, s:] = torch.randn(2, L - s, dim)
                        later = piece(y)
                        if not close(later[:, :s], out[:, :s], atol=1e-5):
                            return False
                    return True
                y = x.clone()
                y[:, -1] = torch.randn(2, dim)
                later = piece(y)
                return type(later) is torch.Tensor and tuple(later.shape) == tuple(out.shape) and bool(((later - out).abs().amax(-1) > 1e-6).all())
        except Exception:
            return False

    def works(make, dim, groups, L=6):
        """With a correct Attention in place of the notebook's: the piece make() builds computes.
        The same input gives the same output, the output at the last site changes when the input at
        site 0 changes (the sites talk), and each group of its own parameters is used."""
        try:
            piece = make()
            perturb(piece)
            shapes = piece.params(values=False)
            x = torch.randn(2, L, dim)
            with piece.swapped(Attention=reference_attention):
                out = piece(x)
                if type(out) is not torch.Tensor or tuple(out.shape) != (2, L, dim) or not torch.isfinite(out).all():
                    return False
                if not close(piece(x), out, atol=1e-6):
                    return False
                y = x.clone()
                y[:, 0] = torch.randn(2, dim)
                later = piece(y)
                if type(later) is not torch.Tensor or tuple(later.shape) != (2, L, dim) or close(later[:, -1], out[:, -1], atol=1e-6):
                    return False
                for prefix in groups:
                    names = [name for name in shapes if name.startswith(prefix)]
                    if not names:
                        return False
                    piece.set_params({name: torch.randn(shapes[name].shape) for name in names})
                    changed = piece(x)
                    if type(changed) is not torch.Tensor or close(changed, out, atol=1e-6):
                        return False
                    out = changed
            return True
        except Exception:
            return False

    def own_work(outer, inner, make, x, y, groups, sizes):
        """Your piece does its own work whatever the piece inside it does: built with a plain linear
        map (made on your side) in place of each `inner` it makes, the same input gives the same
        output, another input another output, and each group of its own parameters is used."""
        try:
            linear = given("nets.nn").Linear
            spare = [linear(*sizes) for _ in range(6)]

            def stand_in(*args, **kwargs):
                return spare.pop()._ref                # your code gets the linear map itself
            with outer.swapped(**{inner: stand_in}):
                piece = make()
            perturb(piece)
            shapes = piece.params(values=False)
            out = piece(x)
            if type(out) is not torch.Tensor or tuple(out.shape[:2]) != tuple(x.shape[:2]) or not torch.isfinite(out).all():
                return False
            if not close(piece(x), out, atol=1e-6):
                return False
            other = piece(y)
            if type(other) is not torch.Tensor or close(other, out, atol=1e-6):
                return False
            for prefix in groups:
                names = [name for name in shapes if name.startswith(prefix)]
                if not names:
                    return False
                piece.set_params({name: torch.randn(shapes[name].shape) for name in names})
                changed = piece(x)
                if type(changed) is not torch.Tensor or close(changed, out, atol=1e-6):
                    return False
                out = changed
            return True
        except Exception:
            return False

    def handed_on(outer, inner, make):
        """The causal values that building the outer piece (make()) hands to the notebook's `inner`
        (a stand-in records them; building stops there, since the stand-in is not a real piece)."""
        seen = []

        def stand_in(*args, **kwargs):
            seen.append(kwargs["causal"] if "causal" in kwargs else (args[2] if len(args) > 2 else False))
        with outer.swapped(**{inner: stand_in}):
            try:
                make()
            except StudentError:
                pass
        return seen


    torch.manual_seed(4)
    worked = False
    for dim, heads in [(12, 3), (8, 2)]:
        on = hears_right(lambda: Block(dim, heads, causal=True), True, dim)
        off = hears_right(lambda: Block(dim, heads), False, dim)
        if on and off:
            worked = worked or works(lambda: Block(dim, heads, causal=True), dim, ("attention.", "mlp."))
            assert worked, f"Block({dim}, {heads}, causal=True) does not compute yet: with a correct Attention, its output should change with its input and use self.attention and self.mlp"
            continue
        # Not Block's fault if your MultiHead is what does not hear right and Block hands causal on to it.
        inner_right = hears_right(lambda: MultiHead(dim, heads, causal=True), True, dim) and hears_right(lambda: MultiHead(dim, heads), False, dim)
        assert not inner_right, f"Block({dim}, {heads}, causal=True) should be causal and Block({dim}, {heads}) should not: " + ("changing later sites changed the output at earlier sites; hand causal on to MultiHead" if not on else "changing the last site should change the output at every site")
        given_on = handed_on(Block, "MultiHead", lambda: Block(dim, heads, causal=True))
        given_off = handed_on(Block, "MultiHead", lambda: Block(dim, heads))
        assert given_on and all(c == True for c in given_on), "Block(dim, heads, causal=True) should make its attention with MultiHead(dim, heads, causal)"
        assert given_off and all(c == False for c in given_off), "Block(dim, heads) should make its MultiHead without the causal switch (causal=False)"
        assert own_work(Block, "MultiHead", lambda: Block(dim, heads, causal=True), torch.randn(2, 6, dim), torch.randn(2, 6, dim), ("attention.", "mlp."), (dim, dim)), f"Block({dim}, {heads}) does not do its own work: x + attention(norm1(x)), then x + mlp(norm2(x))"


@test_case(
    points=1.5, hidden=True,
    failure_message=(
        'MyTransformer(..., causal=True) should hand causal down to every Block: then the logits at position '
        'i do not change when later tokens change, and there is no NaN. Without causal (the default) every '
        'position hears every other. (This is checked with a correct Attention in place of yours; and if your'
        ' Block, MultiHead or Head is what goes wrong, MyTransformer only has to hand causal on to its '
        'blocks.)'))
def test_causal_mytransformer(MyTransformer, Block):
    import math
    import torch
    from course.handles import student, close, given, StudentError
    MyTransformer, Block = student(MyTransformer), student(Block)

    def reference_attention(q, k, v, causal=False):
        dots = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if causal:
            L = q.shape[-2]
            dots = dots.masked_fill(torch.ones(L, L, dtype=torch.bool, device=q.device).triu(1), -math.inf)
        probs = torch.softmax(dots, dim=-1)
        return probs @ v, probs

    def perturb(piece):
        new = {}
        for name, t in piece.params(values=False).items():
            if t.dim() >= 2:
                new[name] = torch.randn(t.shape) / math.sqrt(t.shape[-1])
            elif name.endswith("weight"):
                new[name] = 1 + 0.5 * torch.randn(t.shape)
            else:
                new[name] = 0.5 * torch.randn(t.shape)
        piece.set_params(new)

    def hears_right(make, causal, dim, L=7):
        """With a correct Attention in place of the notebook's: is the piece that make() builds causal
        when it should be (later sites never change earlier outputs), and not when it should not
        (changing the last site changes every output)?"""
        try:
            piece = make()
            perturb(piece)
            x = torch.randn(2, L, dim)
            with piece.swapped(Attention=reference_attention):
                out = piece(x)
                if type(out) is not torch.Tensor or tuple(out.shape[:2]) != (2, L) or torch.isnan(out).any():
                    return False
                if causal:
                    for s in (1, L // 2, L - 1):
                        y = x.clone()
                        y[:, s:] = torch.randn(2, L - s, dim)
                        later = piece(y)
                        if not close(later[:, :s], out[:, :s], atol=1e-5):
                            return False
                    return True
                y = x.clone()
                y[:, -1] = torch.randn(2, dim)
                later = piece(y)
                return type(later) is torch.Tensor and tuple(later.shape) == tuple(out.shape) and bool(((later - out).abs().amax(-1) > 1e-6).all())
        except Exception:
            return False

    def works(make, dim, groups, L=6):
        """With a correct Attention in place of the notebook's: the piece make() builds computes.
        The same input gives the same output, the output at the last site changes when the input at
        site 0 changes (the sites talk), and each group of its own parameters is used."""
        try:
            piece = make()
            perturb(piece)
            shapes = piece.params(values=False)
            x = torch.randn(2, L, dim)
            with piece.swapped(Attention=reference_attention):
                out = piece(x)
                if type(out) is not torch.Tensor or tuple(out.shape) != (2, L, dim) or not torch.isfinite(out).all():
                    return False
                if not close(piece(x), out, atol=1e-6):
                    return False
                y = x.clone()
                y[:, 0] = torch.randn(2, dim)
                later = piece(y)
                if type(later) is not torch.Tensor or tuple(later.shape) != (2, L, dim) or close(later[:, -1], out[:, -1], atol=1e-6):
                    return False
                for prefix in groups:
                    names = [name for name in shapes if name.startswith(prefix)]
                    if not names:
                        return False
                    piece.set_params({name: torch.randn(shapes[name].shape) for name in names})
                    changed = piece(x)
                    if type(changed) is not torch.Tensor or close(changed, out, atol=1e-6):
                        return False
                    out = changed
            return True
        except Exception:
            return False

    def own_work(outer, inner, make, x, y, groups, sizes):
        """Your piece does its own work whatever the piece inside it does: built with a plain linear
        map (made on your side) in place of each `inner` it makes, the same input gives the same
        output, another input another output, and each group of its own parameters is used."""
        try:
            linear = given("nets.nn").Linear
            spare = [linear(*sizes) for _ in range(6)]

            def stand_in(*args, **kwargs):
                return spare.pop()._ref                # your code gets the linear map itself
            with outer.swapped(**{inner: stand_in}):
                piece = make()
            perturb(piece)
            shapes = piece.params(values=False)
            out = piece(x)
            if type(out) is not torch.Tensor or tuple(out.shape[:2]) != tuple(x.shape[:2]) or not torch.isfinite(out).all():
                return False
            if not close(piece(x), out, atol=1e-6):
                return False
            other = piece(y)
            if type(other) is not torch.Tensor or close(other, out, atol=1e-6):
                return False
            for prefix in groups:
                names = [name for name in shapes if name.startswith(prefix)]
                if not names:
                    return False
                piece.set_params({name: torch.randn(shapes[name].shape) for name in names})
                changed = piece(x)
                if type(changed) is not torch.Tensor or close(changed, out, atol=1e-6):
                    return False
                out = changed
            return True
        except Exception:
            return False

    def handed_on(outer, inner, make):
        """The causal values that building the outer piece (make()) hands to the notebook's `inner`
        (a stand-in records them; building stops there, since the stand-in is not a real piece)."""
        seen = []

        def stand_in(*args, **kwargs):
            seen.append(kwargs["causal"] if "causal" in kwargs else (args[2] if len(args) > 2 else False))
        with outer.swapped(**{inner: stand_in}):
            try:
                make()
            except StudentError:
                pass
        return seen


    def net_works(make, V, L=6):
        """The same for a whole network, on tokens: the same tokens give the same logits, the logits
        at the last position change when the token at position 0 changes, and the token table, the
        blocks and the output layer are used."""
        try:
            net = make()
            perturb(net)
            shapes = net.params(values=False)
            x = torch.randint(V, (2, L))
            with net.swapped(Attention=reference_attention):
                out = net(x)
                if type(out) is not torch.Tensor or tuple(out.shape) != (2, L, V) or not torch.isfinite(out).all():
                    return False
                if not close(net(x), out, atol=1e-6):
                    return False
                y = x.clone()
                y[:, 0] = (x[:, 0] + torch.randint(1, V, (2,))) % V
                later = net(y)
                if type(later) is not torch.Tensor or tuple(later.shape) != (2, L, V) or close(later[:, -1], out[:, -1], atol=1e-6):
                    return False
                for prefix in ("embed.", "blocks.", "out."):
                    names = [name for name in shapes if name.startswith(prefix)]
                    if not names:
                        return False
                    net.set_params({name: torch.randn(shapes[name].shape) for name in names})
                    changed = net(x)
                    if type(changed) is not torch.Tensor or close(changed, out, atol=1e-6):
                        return False
                    out = changed
            return True
        except Exception:
            return False

    def net_hears_right(make, causal, V, L=8):
        """The same for a whole network, on tokens: with causal=True the logits at position i do not
        change when the tokens after i change; without, changing the last token changes them all."""
        try:
            net = make()
            perturb(net)
            x = torch.randint(V, (2, L))
            with net.swapped(Attention=reference_attention):
                out = net(x)
                if type(out) is not torch.Tensor or tuple(out.shape) != (2, L, V) or torch.isnan(out).any():
                    return False
                if causal:
                    for i in (0, L // 2, L - 2):
                        y = x.clone()
                        y[:, i + 1:] = (x[:, i + 1:] + torch.randint(1, V, (2, L - 1 - i))) % V
                        if not close(net(y)[:, :i + 1], out[:, :i + 1], atol=1e-4):
                            return False
                    return True
                y = x.clone()
                y[:, -1] = (x[:, -1] + 1) % V
                later = net(y)
                return type(later) is torch.Tensor and tuple(later.shape) == tuple(out.shape) and bool(((later - out).abs().amax(-1) > 1e-6).all())
        except Exception:
            return False

    torch.manual_seed(5)
    worked = False
    for V, dim, heads, layers in [(11, 12, 3, 3), (7, 8, 2, 1)]:
        on = net_hears_right(lambda: MyTransformer(V, dim=dim, heads=heads, layers=layers, causal=True), True, V)
        off = net_hears_right(lambda: MyTransformer(V, dim=dim, heads=heads, layers=layers), False, V)
        if on and off:
            worked = worked or net_works(lambda: MyTransformer(V, dim=dim, heads=heads, layers=layers, causal=True), V)
            assert worked, f"MyTransformer({V}, dim={dim}, heads={heads}, layers={layers}, causal=True) does not compute yet: with a correct Attention, its logits should change with the tokens and use self.embed, self.blocks and self.out"
            continue
        # Not MyTransformer's fault if your Block is what does not hear right and MyTransformer hands causal on to it.
        inner_right = hears_right(lambda: Block(dim, heads, causal=True), True, dim) and hears_right(lambda: Block(dim, heads), False, dim)
        assert not inner_right, f"MyTransformer({V}, dim={dim}, heads={heads}, layers={layers}, causal=True) should be causal and without causal it should not: " + ("changing later tokens changed the logits at earlier positions (or gave NaN); hand causal on to every Block" if not on else "changing the last token should change the logits at every position")
        given_on = handed_on(MyTransformer, "Block", lambda: MyTransformer(V, dim=dim, heads=heads, layers=layers, causal=True))
        given_off = handed_on(MyTransformer, "Block", lambda: MyTransformer(V, dim=dim, heads=heads, layers=layers))
        assert given_on and all(c == True for c in given_on), "MyTransformer(..., causal=True) should make every block with Block(dim, heads, causal)"
        assert given_off and all(c == False for c in given_off), "MyTransformer(...) without causal should make its blocks without the switch (causal=False)"
        assert own_work(MyTransformer, "Block", lambda: MyTransformer(V, dim=dim, heads=heads, layers=layers, causal=True), torch.randint(V, (2, 6)), torch.randint(V, (2, 6)), ("embed.", "blocks.", "out."), (dim, dim)), f"MyTransformer({V}, dim={dim}, heads={heads}, layers={layers}) does not do its own work: out(norm(blocks(embed(x) + position(positions))))"


@test_case(
    points=0.5, hidden=True,
    failure_message=(
        'The causal switch adds no parameters: a causal MyTransformer(2002) has the same 1,314,514 as before.'))
def test_causal_count(MyTransformer):
    from course.handles import student
    MyTransformer = student(MyTransformer)
    got = sum(t.numel() for t in MyTransformer(2002, causal=True).params(values=False).values())
    assert got == 1314514, f"a causal MyTransformer(2002) should have the same 1,314,514 parameters as before (the switch adds none); yours has {got:,}"


@test_case(
    points=0.5, hidden=True,
    failure_message=(
        'With the network on another device (a GPU), your causal MyTransformer makes a tensor on the CPU: '
        'make the positions with torch.arange(L, device=x.device). (This is checked with a correct Attention '
        "in place of yours: the mask's device is Attention's test.)"))
def test_causal_mytransformer_device(MyTransformer, Attention, Head):
    import math
    import torch
    from course.handles import student, watching, close, given
    MyTransformer, Attention, Head = student(MyTransformer), student(Attention), student(Head)

    def reference_attention(q, k, v, causal=False):
        dots = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if causal:
            L = q.shape[-2]
            dots = dots.masked_fill(torch.ones(L, L, dtype=torch.bool, device=q.device).triu(1), -math.inf)
        probs = torch.softmax(dots, dim=-1)
        return probs @ v, probs

    def perturb(piece):
        new = {}
        for name, t in piece.params(values=False).items():
            if t.dim() >= 2:
                new[name] = torch.randn(t.shape) / math.sqrt(t.shape[-1])
            elif name.endswith("weight"):
                new[name] = 1 + 0.5 * torch.randn(t.shape)
            else:
                new[name] = 0.5 * torch.randn(t.shape)
        piece.set_params(new)

    def own_work(outer, inner, make, x, y, groups, sizes):
        """Your piece does its own work whatever the piece inside it does: built with a plain linear
        map (made on your side) in place of each `inner` it makes, the same input gives the same
        output, another input another output, and each group of its own parameters is used."""
        try:
            linear = given("nets.nn").Linear
            spare = [linear(*sizes) for _ in range(6)]

            def stand_in(*args, **kwargs):
                return spare.pop()._ref                # your code gets the linear map itself
            with outer.swapped(**{inner: stand_in}):
                piece = make()
            perturb(piece)
            shapes = piece.params(values=False)
            out = piece(x)
            if type(out) is not torch.Tensor or tuple(out.shape[:2]) != tuple(x.shape[:2]) or not torch.isfinite(out).all():
                return False
            if not close(piece(x), out, atol=1e-6):
                return False
            other = piece(y)
            if type(other) is not torch.Tensor or close(other, out, atol=1e-6):
                return False
            for prefix in groups:
                names = [name for name in shapes if name.startswith(prefix)]
                if not names:
                    return False
                piece.set_params({name: torch.randn(shapes[name].shape) for name in names})
                changed = piece(x)
                if type(changed) is not torch.Tensor or close(changed, out, atol=1e-6):
                    return False
                out = changed
            return True
        except Exception:
            return False

    def switch_used():
        """The causal switch does work somewhere: your Attention's causal weights differ from the
        plain ones and still change with q and k; or (if your Attention is where it goes wrong) your
        Head with causal=True, run with a correct Attention, gives other outputs than without."""
        import math

        def reference_attention(q, k, v, causal=False):
            dots = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
            if causal:
                L = q.shape[-2]
                dots = dots.masked_fill(torch.ones(L, L, dtype=torch.bool, device=q.device).triu(1), -math.inf)
            probs = torch.softmax(dots, dim=-1)
            return probs @ v, probs
        try:
            q, k, v = torch.randn(3, 2, 5, 4)
            w = Attention(q, k, v, causal=True)[1]
            plain = Attention(q, k, v)[1]
            others = [Attention(torch.randn(2, 5, 4), k, v, causal=True)[1], Attention(q, torch.randn(2, 5, 4), v, causal=True)[1]]
            if type(w) is torch.Tensor and tuple(w.shape) == (2, 5, 5) and not close(w, plain, atol=1e-4) \
                    and all(type(o) is torch.Tensor and tuple(o.shape) == (2, 5, 5) and not close(o, w, atol=1e-4) for o in others):
                return True
        except Exception:
            pass
        try:
            on, off = Head(8, 4, causal=True), Head(8, 4)
            values = {name: torch.randn(t.shape) for name, t in on.params(values=False).items()}
            on.set_params(values)
            off.set_params(values)
            x = torch.randn(2, 5, 8)
            with on.swapped(Attention=reference_attention):
                a, b = on(x), off(x)
            return type(a) is torch.Tensor and type(b) is torch.Tensor and tuple(a.shape) == (2, 5, 4) and not close(a, b, atol=1e-5)
        except Exception:
            return False

    torch.manual_seed(9)
    assert switch_used(), "causal=True changes nothing yet (not in your Attention, nor in your Head), so the causal network's device cannot be checked"
    assert own_work(MyTransformer, "Block", lambda: MyTransformer(9, dim=8, heads=2, layers=2, causal=True), torch.randint(9, (2, 6)), torch.randint(9, (2, 6)), ("embed.", "blocks.", "out."), (8, 8)), "your causal MyTransformer does not compute yet (its logits should change with the tokens and use self.embed, self.blocks and self.out), so its device cannot be checked"
    net = MyTransformer(9, dim=8, heads=2, layers=2, causal=True)
    net.to("meta")                                  # another device ("meta": shapes only)
    for block in net.blocks:
        block.to("meta")
    x = torch.zeros(2, 5, dtype=torch.long, device="meta")
    with net.swapped(Attention=reference_attention), watching() as seen:
        out = net.describe(x)                       # shapes and device only
    assert not seen.mixed_devices, "with the network and x on another device your causal network makes a tensor on the CPU: make the positions with device=x.device"
    assert type(out) is dict and out.get("shape") == [2, 5, 9], "your causal MyTransformer gives the wrong shape on another device"


@test_case(
    points=0.5, hidden=True,
    failure_message=(
        'The rules: the causal mask is yours to write; F.scaled_dot_product_attention(is_causal=True), '
        'nn.MultiheadAttention and nn.Transformer... are not allowed anywhere in Attention, Head, MultiHead, '
        'Block or MyTransformer.'))
def test_causal_rules(Attention, Head, MultiHead, Block, MyTransformer):
    import torch
    from course.handles import student, broken_rules, close, StudentError
    Attention, Head, MultiHead, Block, MyTransformer = (student(x) for x in (Attention, Head, MultiHead, Block, MyTransformer))

    def attention_works():
        """Your Attention computes (without the switch): the same q, k, v give the same answer, its
        weights change when q changes and when k changes, and its output changes when v changes."""
        try:
            q, k, v = torch.randn(3, 2, 5, 4)
            out, w = Attention(q, k, v)
            if type(out) is not torch.Tensor or type(w) is not torch.Tensor or tuple(out.shape) != (2, 5, 4) or tuple(w.shape) != (2, 5, 5):
                return False
            again = Attention(q, k, v)
            if not (close(again[0], out, atol=1e-6) and close(again[1], w, atol=1e-6)):
                return False
            for other in ((torch.randn(2, 5, 4), k, v), (q, torch.randn(2, 5, 4), v)):
                w2 = Attention(*other)[1]
                if type(w2) is not torch.Tensor or close(w2, w, atol=1e-4):
                    return False
            out2 = Attention(q, k, torch.randn(2, 5, 4))[0]
            return type(out2) is torch.Tensor and not close(out2, out, atol=1e-4)
        except Exception:
            return False

    def switch_used():
        """The causal switch does work somewhere: your Attention's causal weights differ from the
        plain ones and still change with q and k; or (if your Attention is where it goes wrong) your
        Head with causal=True, run with a correct Attention, gives other outputs than without."""
        import math

        def reference_attention(q, k, v, causal=False):
            dots = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
            if causal:
                L = q.shape[-2]
                dots = dots.masked_fill(torch.ones(L, L, dtype=torch.bool, device=q.device).triu(1), -math.inf)
            probs = torch.softmax(dots, dim=-1)
            return probs @ v, probs
        try:
            q, k, v = torch.randn(3, 2, 5, 4)
            w = Attention(q, k, v, causal=True)[1]
            plain = Attention(q, k, v)[1]
            others = [Attention(torch.randn(2, 5, 4), k, v, causal=True)[1], Attention(q, torch.randn(2, 5, 4), v, causal=True)[1]]
            if type(w) is torch.Tensor and tuple(w.shape) == (2, 5, 5) and not close(w, plain, atol=1e-4) \
                    and all(type(o) is torch.Tensor and tuple(o.shape) == (2, 5, 5) and not close(o, w, atol=1e-4) for o in others):
                return True
        except Exception:
            pass
        try:
            on, off = Head(8, 4, causal=True), Head(8, 4)
            values = {name: torch.randn(t.shape) for name, t in on.params(values=False).items()}
            on.set_params(values)
            off.set_params(values)
            x = torch.randn(2, 5, 8)
            with on.swapped(Attention=reference_attention):
                a, b = on(x), off(x)
            return type(a) is torch.Tensor and type(b) is torch.Tensor and tuple(a.shape) == (2, 5, 4) and not close(a, b, atol=1e-5)
        except Exception:
            return False

    torch.manual_seed(7)
    out, w = Attention(*torch.randn(3, 4, 6), causal=True)
    assert type(out) is torch.Tensor, "your Attention does not run yet, so the rules cannot be checked"
    assert attention_works(), "your Attention does not compute yet (its weights should change with q and k, its output with v), so the rules cannot be checked"
    assert switch_used(), "causal=True changes nothing yet (not in your Attention, nor in your Head), so the rules cannot be checked"
    nets = []
    try:                                  # run the network too, so that what runs is seen as well
        net = MyTransformer(9, dim=8, heads=2, layers=2, causal=True)
        nets.append(net)
        net(torch.randint(9, (2, 5)))
    except StudentError:
        pass
    pieces = [x for x in (Attention, Head, MultiHead, Block, MyTransformer) if x is not None]
    broken = broken_rules(*pieces, *nets)
    assert not broken, "; ".join(broken)
