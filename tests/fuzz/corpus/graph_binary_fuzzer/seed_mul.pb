
seed_mul

x


b
" 
mulaten.mul.Tensor
x
b*
mul