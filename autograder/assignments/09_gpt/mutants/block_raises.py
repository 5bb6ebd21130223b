# question: q4
# expect: fail
# replaces: Block
# why: calls a norm it does not have, so forward raises (GPT is checked with the chapter's Block)
# hint: raised AttributeError at `x = x + self.attn(self.norm(x))`
class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.norm1 = nn.LayerNorm(cfg.dim)
        self.attn = SelfAttention(cfg)
        self.norm2 = nn.LayerNorm(cfg.dim)
        self.mlp = MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.norm(x))
        return x + self.mlp(self.norm2(x))
