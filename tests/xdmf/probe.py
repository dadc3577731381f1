"""Load a Saltus XDMF sidecar in one of ParaView's readers and print, as one JSON line per
requested time, what the reader produced per block: points, cells, bounds and point arrays.
Optionally render the last frame to a PNG.

pvpython probe.py FILE READER T1,T2,... [PNG]
READER: XDMFReader | Xdmf3ReaderS | Xdmf3ReaderT
"""
import json
import sys

from paraview import servermanager as sm
from paraview.simple import *  # noqa: F401,F403
import paraview.simple as pvs

path, reader, times = sys.argv[1], sys.argv[2], [float(t) for t in sys.argv[3].split(",")]
png = sys.argv[4] if len(sys.argv) > 4 else None
if reader == "XDMFReader":
    r = pvs.XDMFReader(FileNames=[path])
else:
    r = getattr(pvs, reader)(FileName=[path])
steps = list(r.TimestepValues) if r.TimestepValues else []
for t in times:
    r.UpdatePipeline(t)
    data = sm.Fetch(r)
    it = data.NewTreeIterator()
    it.VisitOnlyLeavesOn()
    it.InitTraversal()
    blocks = []
    while not it.IsDoneWithTraversal():
        d = it.GetCurrentDataObject()
        name = it.GetCurrentMetaData().Get(data.NAME()) if it.GetCurrentMetaData() else ""
        b = [0.0] * 6
        d.GetBounds(b)
        pd = d.GetPointData()
        arrays = {
            pd.GetArrayName(k): pd.GetArray(k).GetNumberOfComponents()
            for k in range(pd.GetNumberOfArrays())
        }
        # The body axes of the first 64 points, to check against the quaternions.
        values = {}
        for axis in ("axis_1", "axis_2", "axis_3"):
            a = pd.GetArray(axis)
            if a is not None:
                values[axis] = [list(a.GetTuple3(i)) for i in range(min(64, a.GetNumberOfTuples()))]
        blocks.append(
            {
                "name": name,
                "points": d.GetNumberOfPoints(),
                "cells": d.GetNumberOfCells(),
                "bounds": b,
                "arrays": arrays,
                "values": values,
            }
        )
        it.GoToNextItem()
    print(json.dumps({"reader": reader, "time": t, "steps": len(steps), "blocks": blocks}))
if png:
    view = pvs.GetActiveViewOrCreate("RenderView")
    view.ViewSize = [800, 500]
    view.ViewTime = times[-1]
    disp = pvs.Show(r, view)
    disp.SetRepresentationType("Surface")
    disp.PointSize = 8
    disp.LineWidth = 4
    disp.RenderPointsAsSpheres = 1
    pvs.ColorBy(disp, ("POINTS", "velocity", "Magnitude"))
    # Each node's body axis e1 as an arrow (glyph-ready frames of the sidecar).
    # Only blocks with body axes (the nodes; the beams block shares their points): a
    # threshold on |axis_1| = 1 drops the others.
    framed = pvs.Threshold(Input=r)
    framed.Scalars = ["POINTS", "axis_1"]
    framed.ThresholdMethod = "Between"
    framed.LowerThreshold = 0.5
    framed.UpperThreshold = 2.0
    glyph = pvs.Glyph(Input=framed, GlyphType="Arrow")
    glyph.OrientationArray = ["POINTS", "axis_1"]
    glyph.ScaleArray = ["POINTS", "No scale array"]
    glyph.ScaleFactor = 0.03
    glyph.GlyphMode = "All Points"
    gd = pvs.Show(glyph, view)
    gd.AmbientColor = gd.DiffuseColor = [1.0, 0.8, 0.2]
    # Planar mechanisms of the shipped models move in the x-y plane: look down z.
    view.CameraPosition = [0.0, 0.0, 1.0]
    view.CameraFocalPoint = [0.0, 0.0, 0.0]
    view.CameraViewUp = [0, 1, 0]
    view.ResetCamera()
    pvs.SaveScreenshot(png, view, ImageResolution=[800, 500])
