
seed_cat_mul
x
y"%
cataten.cat.default2


x

y"!
mulaten.mul.Tensor
cat*
mul