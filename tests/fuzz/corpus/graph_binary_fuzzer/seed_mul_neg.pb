
seed_mul_neg

x


b
"(
mulaten.mul.Tensor
bÿÿÿÿÿÿÿÿÿ"$
mul_1aten.mul.Tensor
x
mul*
mul_1