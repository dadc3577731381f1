//! The layout of a results file: which datasets [`Hdf5Sink`] creates at
//! `ResultSink::begin` and how one record is copied into their buffers ([`Datasets`]);
//! when and how the buffers reach the disk is the parent module's concern.

use super::*;

/// An element output channel and where its values sit in [`StepRecord::element_values`].
struct Channel {
    series: Column<f64>,
    offset: usize,
    len: usize,
}

/// Call `$d.<column>.$call` for every per-step column of `$d` but the channels and the
/// contact table.
macro_rules! each_series {
    ($d:expr, $($call:tt)*) => {{
        $d.time.$($call)*;
        $d.step.$($call)*;
        $d.position.$($call)*;
        $d.rotation.$($call)*;
        $d.axes.$($call)*;
        $d.velocity.$($call)*;
        $d.angular_velocity.$($call)*;
        $d.iterations.$($call)*;
        $d.backtracks.$($call)*;
        $d.solves.$($call)*;
        $d.active_contacts.$($call)*;
        $d.residual.$($call)*;
        $d.h.$($call)*;
        $d.kinetic.$($call)*;
        $d.potential.$($call)*;
        $d.total.$($call)*;
    }};
}

/// Open datasets and their buffered rows after [`ResultSink::begin`].
pub(super) struct Datasets {
    pub(super) time: Column<f64>,
    pub(super) step: Column<u64>,
    pub(super) position: Column<f64>,
    pub(super) rotation: Column<f64>,
    /// Body axes (columns of R) for glyphs.
    pub(super) axes: Column<f64>,
    pub(super) velocity: Column<f64>,
    pub(super) angular_velocity: Column<f64>,
    pub(super) iterations: Column<u64>,
    pub(super) backtracks: Column<u64>,
    pub(super) solves: Column<u64>,
    pub(super) active_contacts: Column<u64>,
    pub(super) residual: Column<f64>,
    pub(super) h: Column<f64>,
    pub(super) kinetic: Column<f64>,
    pub(super) potential: Column<f64>,
    pub(super) total: Column<f64>,
    channels: Vec<Channel>,
    pub(super) contacts: ContactTable,
    /// `/contact_forces` recovered while the model runs.
    pub(super) forces: crate::live_forces::LiveForces,
    pub(super) n_nodes: usize,
    pub(super) n_stages: usize,
    pub(super) n_element_values: usize,
    /// Buffered bytes per record, contact rows excluded.
    pub(super) record_bytes: usize,
    /// Buffered bytes per contact row.
    pub(super) contact_row_bytes: usize,
}

impl Datasets {
    /// Buffer one record (lengths checked by the caller).
    pub(super) fn push(&mut self, r: &StepRecord<'_>) {
        self.time.push(&[r.t]);
        self.step.push(&[r.step as u64]);
        let nodes = r.nodes;
        self.position
            .extend(nodes.iter().flat_map(|s| [s.x.x, s.x.y, s.x.z]));
        self.rotation
            .extend(nodes.iter().flat_map(|s| [s.r.w, s.r.i, s.r.j, s.r.k]));
        self.axes.extend(nodes.iter().flat_map(|s| {
            let r = s.r.to_rotation_matrix();
            let m = r.matrix();
            // Column-major storage: e1, e2, e3 one after the other.
            let mut a = [0.0; 9];
            a.copy_from_slice(m.as_slice());
            a
        }));
        self.velocity
            .extend(nodes.iter().flat_map(|s| [s.v.x, s.v.y, s.v.z]));
        self.angular_velocity.extend(nodes.iter().flat_map(|s| {
            let w = s.omega_spatial();
            [w.x, w.y, w.z]
        }));

        // The initial record carries no statistics: zeros in every stage column.
        let stages = r.stats.stages();
        let col = |i: usize| stages.get(i).copied().unwrap_or_default();
        let ns = self.n_stages;
        self.iterations
            .extend((0..ns).map(|i| col(i).iterations as u64));
        self.backtracks
            .extend((0..ns).map(|i| col(i).backtracks as u64));
        self.solves.extend((0..ns).map(|i| col(i).solves as u64));
        self.active_contacts.push(&[r.stats.active_contacts as u64]);
        self.residual.extend((0..ns).map(|i| col(i).residual));
        self.h.push(&[r.stats.h]);
        self.kinetic.push(&[r.energy.kinetic]);
        self.potential.push(&[r.energy.potential]);
        self.total.push(&[r.energy.kinetic + r.energy.potential]);
        for c in &mut self.channels {
            c.series.push(&r.element_values[c.offset..c.offset + c.len]);
        }
        self.contacts.push(r.step, r.t, r.contacts);
    }

    /// Feed the record's contact rows to the live force recovery (`root`: the file's root
    /// group, where `/contact_forces` is created when first needed).
    pub(super) fn push_forces(
        &mut self,
        root: &Group,
        r: &StepRecord<'_>,
    ) -> Result<(), (String, hdf5::Error)> {
        self.forces.push(root, r.t, r.stats.h, r.contacts)
    }

    /// Write the `records` buffered records as records `first..first + records`; the buffers
    /// are kept (see [`Datasets::clear`]). Errors name the dataset.
    pub(super) fn write(
        &mut self,
        first: usize,
        records: usize,
    ) -> Result<(), (String, hdf5::Error)> {
        each_series!(self, write(first, records)?);
        for c in &self.channels {
            c.series.write(first, records)?;
        }
        self.contacts.write(first, records)?;
        self.forces.write()
    }

    /// Drop the buffered records after [`Datasets::write`], keeping the buffers' capacity.
    pub(super) fn clear(&mut self) {
        each_series!(self, clear());
        for c in &mut self.channels {
            c.series.clear();
        }
        self.contacts.clear();
    }

    /// Reserve buffer space for `records` records (no contact rows).
    pub(super) fn reserve(&mut self, records: usize) {
        each_series!(self, reserve(records));
        for c in &mut self.channels {
            c.series.reserve(records);
        }
        self.contacts.reserve(records, 0);
    }

    /// Bytes held by `records` buffered records and the buffered contact rows.
    pub(super) fn buffered_bytes(&self, records: usize) -> usize {
        records * self.record_bytes
            + self.contacts.buffered_rows() * self.contact_row_bytes
            + self.forces.buffered_bytes()
    }
}

impl Hdf5Sink {
    pub(super) fn series<T: H5Type + Copy>(
        &self,
        group: &Group,
        group_path: &str,
        name: &str,
        row: &[usize],
        unit: &str,
        description: &str,
    ) -> Result<Column<T>, SinkError> {
        Column::create(group, group_path, name, row, unit, description)
            .map_err(|(what, e)| sink_err(&self.path, &what, e))
    }

    pub(super) fn create_layout(&self, layout: &OutputLayout) -> Result<Datasets, SinkError> {
        let file = self.file()?;
        let path = &self.path;
        let attr_err = |what: &str| {
            let what = what.to_string();
            move |e: hdf5::Error| sink_err(path, &what, e)
        };
        write_str_attr(file, "program", "saltus").map_err(attr_err("root attribute `program`"))?;
        write_str_attr(file, "version", env!("CARGO_PKG_VERSION"))
            .map_err(attr_err("root attribute `version`"))?;
        write_str_attr(file, "units", UNITS).map_err(attr_err("root attribute `units`"))?;
        write_str_attr(file, "created_by", &self.created_by)
            .map_err(attr_err("root attribute `created_by`"))?;
        if let Some(text) = &self.model_text {
            write_str_attr(file, "model", text).map_err(attr_err("root attribute `model`"))?;
        }
        let group = |name: &str| {
            file.create_group(name)
                .map_err(|e| sink_err(path, &format!("group `/{name}`"), e))
        };
        let root: &Group = file;
        let nodes = group("nodes")?;
        let solver = group("solver")?;
        let energy = group("energy")?;
        let elements = group("elements")?;

        let n_nodes = layout.node_names.len();
        let string_dataset = |g: &Group, name: &str, values: &[String], what: &str| {
            write_strings_dataset(g, name, values).map_err(|e| sink_err(path, what, e))
        };
        string_dataset(
            &nodes,
            "names",
            &layout.node_names,
            "dataset `/nodes/names`",
        )?;
        let index: Vec<i64> = (0..n_nodes as i64).collect();
        nodes
            .new_dataset_builder()
            .with_data(&index)
            .create("index")
            .map_err(|e| sink_err(path, "dataset `/nodes/index`", e))?;

        string_dataset(
            &solver,
            "stages",
            &layout.stage_names,
            "dataset `/solver/stages`",
        )?;
        let n_stages = layout.stage_names.len();
        let columns = format!("columns: {}", layout.stage_names.join(", "));

        let s = |g: &Group, gp: &str, name: &str, row: &[usize], unit: &str, desc: &str| {
            self.series::<f64>(g, gp, name, row, unit, desc)
        };
        let time = s(root, "", "time", &[], "s", "time t of each record")?;
        let step = self.series::<u64>(
            root,
            "",
            "step",
            &[],
            "1",
            "step index of each record (0 = initial state)",
        )?;
        let position = s(
            &nodes,
            "/nodes",
            "position",
            &[n_nodes, 3],
            "m",
            "node position x in the inertial frame",
        )?;
        let rotation = s(
            &nodes,
            "/nodes",
            "rotation",
            &[n_nodes, 4],
            "1",
            "node rotation (body to inertial) as a unit quaternion (w, x, y, z)",
        )?;
        let axes = s(
            &nodes,
            "/nodes",
            "axes",
            &[n_nodes, 9],
            "1",
            "body axes in the inertial frame, the columns of R: e1 (0..3), e2 (3..6), e3 (6..9); \
             for glyphs (ParaView: axis_1, axis_2, axis_3 of the XDMF sidecars)",
        )?;
        let velocity = s(
            &nodes,
            "/nodes",
            "velocity",
            &[n_nodes, 3],
            "m/s",
            "node translational velocity in the inertial frame",
        )?;
        let angular_velocity = s(
            &nodes,
            "/nodes",
            "angular_velocity",
            &[n_nodes, 3],
            "rad/s",
            "node angular velocity in the inertial (spatial) frame, omega = R Omega",
        )?;
        let iterations = self.series::<u64>(
            &solver,
            "/solver",
            "iterations",
            &[n_stages],
            "1",
            &format!("Newton iterations per stage ({columns})"),
        )?;
        let backtracks = self.series::<u64>(
            &solver,
            "/solver",
            "line_search",
            &[n_stages],
            "1",
            &format!("line-search backtracks per stage ({columns})"),
        )?;
        let solves = self.series::<u64>(
            &solver,
            "/solver",
            "solves",
            &[n_stages],
            "1",
            &format!(
                "solves per stage, e.g. the impact problems of the velocity stage ({columns})"
            ),
        )?;
        let active_contacts = self.series::<u64>(
            &solver,
            "/solver",
            "active_contacts",
            &[],
            "1",
            "contacts closed at position level (in the position active set)",
        )?;
        let residual = s(
            &solver,
            "/solver",
            "residual",
            &[n_stages],
            "1",
            &format!("final residual norm per stage ({columns})"),
        )?;
        let h = s(&solver, "/solver", "h", &[], "s", "step size used")?;
        let kinetic = s(&energy, "/energy", "kinetic", &[], "J", "kinetic energy")?;
        let potential = s(
            &energy,
            "/energy",
            "potential",
            &[],
            "J",
            "potential energy (gravity, elastic)",
        )?;
        let total = s(
            &energy,
            "/energy",
            "total",
            &[],
            "J",
            "total mechanical energy (kinetic + potential)",
        )?;

        let mut channels = Vec::new();
        let mut group_names = HashSet::new();
        for (e, name) in layout.element_names.iter().enumerate() {
            let gname = element_group_name(name);
            if !group_names.insert(gname.clone()) {
                return Err(sink_err(
                    path,
                    &format!("element `{name}`"),
                    format!("group name `/elements/{gname}` is used twice"),
                ));
            }
            let gpath = format!("/elements/{gname}");
            let g = elements
                .create_group(&gname)
                .map_err(|e| sink_err(path, &format!("group `{gpath}`"), e))?;
            let type_name = layout.element_types.get(e).map_or("", String::as_str);
            write_str_attr(&g, "type", type_name)
                .and_then(|()| write_str_attr(&g, "name", name))
                .and_then(|()| match layout.element_ids.get(e) {
                    Some(id) => g.new_attr::<u64>().create("id")?.write_scalar(id),
                    None => Ok(()),
                })
                .and_then(|()| match layout.element_nodes.get(e) {
                    Some(nodes) => {
                        let nodes: Vec<i64> = nodes.iter().map(|&n| n as i64).collect();
                        g.new_attr::<i64>()
                            .shape(nodes.len())
                            .create("nodes")?
                            .write_raw(&nodes)
                    }
                    None => Ok(()),
                })
                .map_err(|e| sink_err(path, &format!("attributes of group `{gpath}`"), e))?;
            let outputs = layout.element_outputs.get(e).map_or(&[][..], Vec::as_slice);
            let mut offset = layout.element_offsets.get(e).copied().unwrap_or(0);
            let mut seen = HashSet::new();
            for o in outputs {
                if !seen.insert(o.name) {
                    return Err(sink_err(
                        path,
                        &format!("dataset `{gpath}/{}`", o.name),
                        "output name used twice by the element",
                    ));
                }
                let series = s(&g, &gpath, o.name, &[o.len], o.unit, o.description)?;
                channels.push(Channel {
                    series,
                    offset,
                    len: o.len,
                });
                offset += o.len;
            }
        }
        let contacts = ContactTable::create(root).map_err(|(what, e)| sink_err(path, &what, e))?;
        let (count_bytes, contact_row_bytes) = contacts.buffer_bytes();
        let record_bytes = [
            time.row_bytes(),
            step.row_bytes(),
            position.row_bytes(),
            rotation.row_bytes(),
            axes.row_bytes(),
            velocity.row_bytes(),
            angular_velocity.row_bytes(),
            iterations.row_bytes(),
            backtracks.row_bytes(),
            solves.row_bytes(),
            active_contacts.row_bytes(),
            residual.row_bytes(),
            h.row_bytes(),
            kinetic.row_bytes(),
            potential.row_bytes(),
            total.row_bytes(),
            count_bytes,
        ]
        .iter()
        .sum::<usize>()
            + channels.iter().map(|c| c.series.row_bytes()).sum::<usize>();
        Ok(Datasets {
            contacts,
            forces: crate::live_forces::LiveForces::new(self.force_threshold, self.force_samples),
            time,
            step,
            position,
            rotation,
            axes,
            velocity,
            angular_velocity,
            iterations,
            backtracks,
            solves,
            active_contacts,
            residual,
            h,
            kinetic,
            potential,
            total,
            channels,
            n_nodes,
            n_stages,
            n_element_values: layout.n_element_values,
            record_bytes,
            contact_row_bytes,
        })
    }
}
