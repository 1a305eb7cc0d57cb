module guardjit.dev/guardjit

go 1.19
