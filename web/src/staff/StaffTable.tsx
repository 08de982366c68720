// The console's tables: a caption (for screen readers, or shown above the table), one row of column
// headings and the page's rows, in a wrapper that scrolls. Below 700 px staff.css turns each row
// into a card whose cells say their column (each cell's data-label), so nothing scrolls sideways.

import type { ReactNode } from 'react';

/** A column's heading; `num` aligns it right, over figures. */
export type Column = string | { label: string; num: true };

export function StaffTable({
  caption,
  shownCaption = false,
  className,
  columns,
  children,
}: {
  caption: ReactNode;
  /** Show the caption above the table (otherwise only screen readers read it). */
  shownCaption?: boolean;
  /** A class beside `staff-table` (a table's own column widths). */
  className?: string;
  /** The headings in order; `false` leaves a column out (one the member's role may not use). */
  columns: (Column | false)[];
  /** The rows (`<tr>`s, each cell with its data-label). */
  children: ReactNode;
}) {
  return (
    <div className="table-wrap">
      <table className={className ? `staff-table ${className}` : 'staff-table'}>
        <caption className={shownCaption ? 'staff-caption' : 'sr-only'}>{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) =>
              column === false ? null : typeof column === 'string' ? (
                <th scope="col" key={column}>
                  {column}
                </th>
              ) : (
                <th scope="col" key={column.label} className="num">
                  {column.label}
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
