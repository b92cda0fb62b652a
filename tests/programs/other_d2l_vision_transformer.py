"""Dive into Deep Learning (d2l.ai), 11.8 Transformers for Vision: a Vision Transformer (patch
embedding by a lazy convolution, class token, learned position embedding, pre-norm blocks of d2l's
multi-head attention) trained with d2l's own Trainer and Classifier.

Source: https://github.com/d2l-ai/d2l-en/tree/23d7a5aecceee57d1292c56e90cce307f183bb0e,
chapter_attention-mechanisms-and-transformers/vision-transformer.md: the code blocks for
"pytorch" and "all", in page order. Licence: the book's sample code is MIT-0 (LICENSE-SAMPLECODE; the text
CC BY-SA 4.0).

Changes in the port:
- imports: torch -> autogradcli. `from d2l import torch as d2l` is kept: `import _d2l_torch`
  registers the d2l package's PyTorch module (tests/programs/_d2l_torch.py: d2l/torch.py's
  Trainer, Classifier, Module, DataModule, the attention classes and the alias block, verbatim;
  its ProgressBoard keeps the points it is given and draws nothing).
- data: d2l.FashionMNIST -> _d2l_torch's stand-in of the same name over the bundled 8x8 digits
  (800 for training, 200 for validation), its loaders without worker processes.
- sizes: the shape-check ViT block 512 -> 32 hiddens; the trained ViT on 8x8 images in 2x2
  patches, 32 hiddens, MLP 64, 2 heads, 2 blocks, 2 epochs of batches of 32, lr 0.1 -> 0.5.
- torch.manual_seed(0) added; outcome (added): the mean training loss the board received over the
  last third of the steps is below that of the first third (a ViT trained by SGD for so few steps
  learns slowly: the page's accuracy is not claimed).
"""
import autogradcli
import _d2l_torch  # noqa: F401  (the port: registers d2l.torch, tests/programs/_d2l_torch.py)

autogradcli.manual_seed(0)

# ---- chapter_attention-mechanisms-and-transformers/vision-transformer.md ----
from d2l import torch as d2l
import autogradcli as torch
from autogradcli import nn

class PatchEmbedding(nn.Module):
    def __init__(self, img_size=96, patch_size=16, num_hiddens=512):
        super().__init__()
        def _make_tuple(x):
            if not isinstance(x, (list, tuple)):
                return (x, x)
            return x
        img_size, patch_size = _make_tuple(img_size), _make_tuple(patch_size)
        self.num_patches = (img_size[0] // patch_size[0]) * (
            img_size[1] // patch_size[1])
        self.conv = nn.LazyConv2d(num_hiddens, kernel_size=patch_size,
                                  stride=patch_size)

    def forward(self, X):
        # Output shape: (batch size, no. of patches, no. of channels)
        return self.conv(X).flatten(2).transpose(1, 2)

img_size, patch_size, num_hiddens, batch_size = 96, 16, 32, 4  # port: num_hiddens 512 -> 32
patch_emb = PatchEmbedding(img_size, patch_size, num_hiddens)
X = d2l.zeros(batch_size, 3, img_size, img_size)
d2l.check_shape(patch_emb(X),
                (batch_size, (img_size//patch_size)**2, num_hiddens))

class ViTMLP(nn.Module):
    def __init__(self, mlp_num_hiddens, mlp_num_outputs, dropout=0.5):
        super().__init__()
        self.dense1 = nn.LazyLinear(mlp_num_hiddens)
        self.gelu = nn.GELU()
        self.dropout1 = nn.Dropout(dropout)
        self.dense2 = nn.LazyLinear(mlp_num_outputs)
        self.dropout2 = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout2(self.dense2(self.dropout1(self.gelu(
            self.dense1(x)))))

class ViTBlock(nn.Module):
    def __init__(self, num_hiddens, norm_shape, mlp_num_hiddens,
                 num_heads, dropout, use_bias=False):
        super().__init__()
        self.ln1 = nn.LayerNorm(norm_shape)
        self.attention = d2l.MultiHeadAttention(num_hiddens, num_heads,
                                                dropout, use_bias)
        self.ln2 = nn.LayerNorm(norm_shape)
        self.mlp = ViTMLP(mlp_num_hiddens, num_hiddens, dropout)

    def forward(self, X, valid_lens=None):
        X = X + self.attention(*([self.ln1(X)] * 3), valid_lens)
        return X + self.mlp(self.ln2(X))

X = d2l.ones((2, 100, 24))
encoder_blk = ViTBlock(24, 24, 48, 8, 0.5)
encoder_blk.eval()
d2l.check_shape(encoder_blk(X), X.shape)

class ViT(d2l.Classifier):
    """Vision Transformer."""
    def __init__(self, img_size, patch_size, num_hiddens, mlp_num_hiddens,
                 num_heads, num_blks, emb_dropout, blk_dropout, lr=0.1,
                 use_bias=False, num_classes=10):
        super().__init__()
        self.save_hyperparameters()
        self.patch_embedding = PatchEmbedding(
            img_size, patch_size, num_hiddens)
        self.cls_token = nn.Parameter(d2l.zeros(1, 1, num_hiddens))
        num_steps = self.patch_embedding.num_patches + 1  # Add the cls token
        # Positional embeddings are learnable
        self.pos_embedding = nn.Parameter(
            torch.randn(1, num_steps, num_hiddens))
        self.dropout = nn.Dropout(emb_dropout)
        self.blks = nn.Sequential()
        for i in range(num_blks):
            self.blks.add_module(f"{i}", ViTBlock(
                num_hiddens, num_hiddens, mlp_num_hiddens,
                num_heads, blk_dropout, use_bias))
        self.head = nn.Sequential(nn.LayerNorm(num_hiddens),
                                  nn.Linear(num_hiddens, num_classes))

    def forward(self, X):
        X = self.patch_embedding(X)
        X = d2l.concat((self.cls_token.expand(X.shape[0], -1, -1), X), 1)
        X = self.dropout(X + self.pos_embedding)
        for blk in self.blks:
            X = blk(X)
        return self.head(X[:, 0])

img_size, patch_size = 8, 2  # port: 96, 16 -> 8, 2 (the 8x8 digits)
num_hiddens, mlp_num_hiddens, num_heads, num_blks = 32, 64, 2, 2  # port: 512, 2048, 8, 2
emb_dropout, blk_dropout, lr = 0.1, 0.1, 0.5  # port: lr 0.1 -> 0.5
model = ViT(img_size, patch_size, num_hiddens, mlp_num_hiddens, num_heads,
            num_blks, emb_dropout, blk_dropout, lr)
trainer = d2l.Trainer(max_epochs=2, num_gpus=1)  # port: 10 epochs -> 2
data = d2l.FashionMNIST(batch_size=32, resize=(img_size, img_size))  # port: 128 -> 32
trainer.fit(model, data)


# ---- outcome (added) ----
points = model.board.points
val_acc = [y for label, x, y in points if label == 'val_acc']
train_loss = [y for label, x, y in points if label == 'train_loss']
first, last = train_loss[:len(train_loss) // 3], train_loss[-(len(train_loss) // 3):]
print("train loss %.3f (first third) -> %.3f (last third)" % (sum(first) / len(first), sum(last) / len(last)))
assert sum(last) / len(last) < sum(first) / len(first) - 0.05, (first, last)
assert len(val_acc) > 0 and all(0.0 <= a <= 1.0 for a in val_acc)
