
seed_cat_add
x
y"%
cataten.cat.default2


x

y"!
addaten.add.Tensor
cat*
add