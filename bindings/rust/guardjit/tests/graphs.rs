//! Graphs made with the builder, from binary protobuf and with external
//! data.

use guardjit::{
    Arg, Context, DType, ErrorCode, Function, Graph, GraphBuilder, LoadOptions, Result, TensorView,
};

#[test]
fn builder_graph_with_kwargs_constants_lists_and_dtypes() -> Result<()> {
    let ctx = Context::new()?;
    let mut b = GraphBuilder::new(&ctx, "built")?;
    b.add_input("a")?;
    b.add_input("b")?;
    let w = [1.0f32, 10.0, 100.0];
    b.add_constant("w", &TensorView::new(&w, &[3])?)?;
    // a + 2 * b (alpha keyword), relu, times w.
    b.add_node(
        "add",
        "aten.add.Tensor",
        &[
            Arg::reference("a"),
            Arg::reference("b"),
            Arg::int(2).named("alpha"),
        ],
    )?;
    b.add_node("relu", "aten.relu.default", &[Arg::reference("add")])?;
    b.add_node(
        "mul",
        "aten.mul.Tensor",
        &[Arg::reference("relu"), Arg::reference("w")],
    )?;
    // Row sums, kept as a column, as float64.
    b.add_node(
        "sum",
        "aten.sum.dim_IntList",
        &[Arg::reference("mul"), Arg::ints(&[1]), Arg::bool(true)],
    )?;
    b.add_node(
        "f64",
        "aten._to_copy.default",
        &[
            Arg::reference("sum"),
            Arg::dtype(DType::Float64).named("dtype"),
        ],
    )?;
    // A factory op with dtype, device and None keywords.
    b.add_node(
        "full",
        "aten.full.default",
        &[
            Arg::ints(&[2]),
            Arg::float(3.5),
            Arg::dtype(DType::Int64).named("dtype"),
            Arg::none().named("layout"),
            Arg::device("cpu").named("device"),
        ],
    )?;
    b.add_node(
        "cat",
        "aten.cat.default",
        &[Arg::references(&["relu", "relu"])],
    )?;
    b.set_outputs(&["f64", "full", "cat"])?;
    let graph = b.finish()?;
    assert_eq!(graph.input_names(), ["a", "b"]);
    assert_eq!(graph.output_names(), ["f64", "full", "cat"]);
    let tabular = graph.to_tabular()?;
    assert!(tabular.contains("aten.sum.dim_IntList"), "{tabular}");

    let f = Function::new(&graph)?;
    let a = [1.0f32, -5.0, 2.0, -1.0, 0.5, 0.25];
    let bb = [0.5f32, 1.0, -1.0];
    let out = f.call_alloc(&[TensorView::new(&a, &[2, 3])?, TensorView::new(&bb, &[3])?])?;
    let relu: Vec<f32> = a
        .iter()
        .enumerate()
        .map(|(i, &v)| (v + 2.0 * bb[i % 3]).max(0.0))
        .collect();
    let sums: Vec<f64> = (0..2)
        .map(|r| (0..3).map(|c| f64::from(relu[r * 3 + c] * w[c])).sum())
        .collect();
    assert_eq!(out[0].dtype(), DType::Float64);
    assert_eq!(out[0].shape(), [2, 1]);
    assert_eq!(out[0].as_slice::<f64>()?, sums);
    assert_eq!(out[1].as_slice::<i64>()?, [3, 3]);
    assert_eq!(out[2].shape(), [4, 3]);
    let cat: Vec<f32> = relu.iter().chain(&relu).copied().collect();
    assert_eq!(out[2].as_slice::<f32>()?, cat);
    Ok(())
}

#[test]
fn builder_is_spent_by_a_failed_finish_too() {
    let ctx = Context::new().unwrap();
    let b = GraphBuilder::new(&ctx, "empty").unwrap();
    // No outputs: finish fails, and the builder is consumed either way.
    let e = b.finish().unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
}

/// Protobuf wire format: a length-delimited field.
fn field(number: u32, bytes: &[u8]) -> Vec<u8> {
    fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
    let mut out = Vec::new();
    varint(&mut out, (u64::from(number) << 3) | 2);
    varint(&mut out, bytes.len() as u64);
    out.extend_from_slice(bytes);
    out
}

#[test]
fn graph_from_binary_protobuf() -> Result<()> {
    // Graph { name: "neg" placeholders { name: "x" }
    //         nodes { name: "neg" target: "aten.neg.default" args { ref: "x" } }
    //         outputs { ref: "neg" } }
    let arg_x = field(1, b"x");
    let node = [
        field(1, b"neg"),
        field(2, b"aten.neg.default"),
        field(3, &arg_x),
    ]
    .concat();
    let bytes = [
        field(1, b"neg"),
        field(2, &field(1, b"x")),
        field(4, &node),
        field(5, &field(1, b"neg")),
    ]
    .concat();
    let ctx = Context::new()?;
    let graph = Graph::from_bytes(&ctx, &bytes)?;
    assert_eq!(graph.output_names(), ["neg"]);
    let x = [1i32, -2, 3];
    let out = Function::new(&graph)?.call_alloc(&[TensorView::new(&x, &[3])?])?;
    assert_eq!(out[0].as_slice::<i32>()?, [-1, 2, -3]);
    Ok(())
}

#[test]
fn external_data_resolves_against_the_load_options_dir() -> Result<()> {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("guardjit_external_data");
    std::fs::create_dir_all(&dir).unwrap();
    let w: Vec<u8> = [2.0f32, 3.0, 4.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    std::fs::write(dir.join("w.bin"), &w).unwrap();
    let text = |length: usize| {
        format!(
            "name: \"ext\" placeholders {{ name: \"x\" }} \
             constants {{ name: \"w\" dtype: FLOAT32 sizes: 3 external {{ path: \"w.bin\" length: {length} }} }} \
             nodes {{ name: \"mul\" target: \"aten.mul.Tensor\" args {{ ref: \"x\" }} args {{ ref: \"w\" }} }} \
             outputs {{ ref: \"mul\" }}"
        )
    };
    let ctx = Context::new()?;
    let graph =
        Graph::from_text_with(&ctx, &text(12), &LoadOptions::new().external_data_dir(&dir))?;
    let x = [1.0f32, 1.0, 2.0];
    let out = Function::new(&graph)?.call_alloc(&[TensorView::new(&x, &[3])?])?;
    assert_eq!(out[0].as_slice::<f32>()?, [2.0, 3.0, 8.0]);
    // The same file written as a .pbtxt next to the data: from_file resolves
    // against the file's directory.
    std::fs::write(dir.join("ext.pbtxt"), text(12)).unwrap();
    Graph::from_file(&ctx, dir.join("ext.pbtxt"))?;
    // Missing file, and a file shorter than the constant.
    let e = Graph::from_text_with(
        &ctx,
        &text(12),
        &LoadOptions::new().external_data_dir(dir.join("nope")),
    )
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound, "{e}");
    assert!(e.message().contains("w.bin"), "{e}");
    std::fs::write(dir.join("w.bin"), &w[..8]).unwrap();
    let e = Graph::from_text_with(&ctx, &text(12), &LoadOptions::new().external_data_dir(&dir))
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::DataLoss, "{e}");
    Ok(())
}

#[test]
fn inputs_and_outputs_declared_by_the_file() -> Result<()> {
    use guardjit::{Dim, TensorInfo};
    let ctx = Context::new()?;
    let g = Graph::from_text(
        &ctx,
        r#"name: "meta"
placeholders { name: "x" meta { dtype: FLOAT32 dims { symbol: "batch" } dims { size: 3 } dims {} } }
placeholders { name: "y" }
outputs { ref: "x" }
output_meta { dtype: INT64 unknown_rank: true }"#,
    )?;
    assert_eq!(
        g.inputs(),
        vec![
            TensorInfo {
                name: "x".into(),
                dtype: Some(DType::Float32),
                dims: Some(vec![
                    Dim::Dynamic(Some("batch".into())),
                    Dim::Static(3),
                    Dim::Dynamic(None)
                ]),
            },
            TensorInfo {
                name: "y".into(),
                dtype: None,
                dims: None
            },
        ]
    );
    assert_eq!(
        g.outputs(),
        vec![TensorInfo {
            name: "x".into(),
            dtype: Some(DType::Int64),
            dims: None
        }]
    );
    Ok(())
}
